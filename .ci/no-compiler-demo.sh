#!/usr/bin/env bash
# The README's set-up on a machine with only Node (the node:20-slim case): in a fresh clone,
# with no python3, make or C++ compiler on PATH, `install` and `demo` must pass (the demo on
# the heap backend, with one warning), and `test` must stop at once with one line naming
# the tools to install.
# npm and pnpm put the running node's folder on PATH, and on Debian that is /usr/bin, where
# the compilers live; so node runs as a copy in a folder of its own, beside links to every
# other command on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
trap '[ -n "${MEMLAYER_KEEP_WORK:-}" ] || rm -rf "$work"' EXIT
bin="$work/bin"
mkdir -p "$bin"
cp "$(command -v node)" "$bin/node"
hidden='^(python[0-9.]*(-config)?|make|gmake|cc|c\+\+|cpp(-[0-9]+)?|g\+\+.*|gcc.*|clang.*|.*-linux-gnu-(gcc|g\+\+|c\+\+|cpp).*)$'
IFS=: read -ra dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  [ -d "$dir" ] || continue
  for tool in "$dir"/*; do
    name="${tool##*/}"
    { [ -x "$tool" ] && [ ! -d "$tool" ]; } || continue
    [[ "$name" =~ $hidden ]] && continue
    [ -e "$bin/$name" ] || ln -s "$tool" "$bin/$name" # the first on PATH wins, as on PATH
  done
done
for tool in python3 python make cc c++ g++; do
  if PATH="$bin" command -v "$tool" >/dev/null 2>&1; then
    echo "no-compiler: $tool is still reachable" >&2
    exit 1
  fi
done

git clone -q --no-hardlinks . "$work/repo"
cd "$work/repo"
fail() {
  echo "no-compiler: $1" >&2
  tail -n 30 "$2" >&2
  echo "no-compiler: 0 passed, 1 failed"
  exit 1
}
PATH="$bin" npx -y pnpm@12.21.0 install --frozen-lockfile >"$work/install.log" 2>&1 ||
  fail "install failed" "$work/install.log"
PATH="$bin" npx -y pnpm@12.21.0 demo >"$work/demo.log" 2>&1 || fail "demo failed" "$work/demo.log"
# One warning: the heap fallback's (Node adds a hint line on how to trace it).
warnings="$(grep -i 'warn' "$work/demo.log" | grep -v -- '--trace-warnings' || true)"
if [ "$(printf '%s' "$warnings" | grep -c .)" != 1 ] || [[ "$warnings" != *MEMLAYER_MMAP_HEAP_FALLBACK* ]]; then
  fail "the demo should print exactly one warning, the heap fallback's; it printed: ${warnings:-none}" "$work/demo.log"
fi
grep -q '^verdict: ' "$work/demo.log" || fail "the demo printed no verdict" "$work/demo.log"
if PATH="$bin" npx -y pnpm@12.21.0 test >"$work/test.log" 2>&1; then
  fail "test passed without a compiler: the suite needs the addon built" "$work/test.log"
fi
grep -q 'needs python3, make and a C++ compiler; missing: python3, make, g++' "$work/test.log" ||
  fail "test did not stop with the line naming the tools to install" "$work/test.log"
echo "no-compiler: install and demo pass on the heap backend with one warning; test stops at once naming the tools"
echo "no-compiler: 1 passed, 0 failed"

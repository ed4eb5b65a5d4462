#!/usr/bin/env bash
# Leak and memory-error check of mmap_native.node under valgrind memcheck.
#
# Node itself (V8's JIT, its allocator, libuv threads) reports thousands of errors and
# "possibly lost" blocks that are not ours, and V8 frees little at exit. So valgrind's own
# exit status is not used: scripts/valgrind-report.mjs keeps only the error records and
# definite-leak records that have a frame inside mmap_native.node and fails on those.
# Usage: pnpm --filter @memlayer/mmap-native valgrind [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null 2>&1; then
  echo "valgrind: not installed, skipping the leak check (apt-get install valgrind)"
  exit 0
fi
if [ ! -f addon/build/Release/mmap_native.node ]; then
  echo "valgrind: addon not built; run \`pnpm --filter @memlayer/mmap-native build:addon\`" >&2
  exit 1
fi

rounds="${1:-3}"
log="$(mktemp -t mmap-native-valgrind.XXXXXX.log)"
status=0
# --error-exitcode only tells valgrind's verdict apart from the script's own exit code;
# the decision is made by the report below.
valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite \
  --errors-for-leak-kinds=definite --error-exitcode=97 --num-callers=30 \
  --log-file="$log" node --expose-gc scripts/valgrind-scenarios.mjs "$rounds" || status=$?

if [ "$status" -ne 0 ] && [ "$status" -ne 97 ]; then
  echo "valgrind: the scenario script failed (exit $status); log: $log" >&2
  exit "$status"
fi
node scripts/valgrind-report.mjs "$log"

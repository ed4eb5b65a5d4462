import { defineConfig } from 'vitest/config';

// Tests run on TypeScript sources of this package and its siblings (no build step needed).
// They start real processes and map real files; on a loaded 2-core machine the default
// 5 s limit would fail slow-but-correct tests, so the limit only catches hangs.
export default defineConfig({
  resolve: { conditions: ['memlayer-source'] },
  ssr: { resolve: { conditions: ['memlayer-source'] } },
  test: { include: ['test/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 },
});

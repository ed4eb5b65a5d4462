import { defineConfig } from 'vitest/config';

// Tests run on the TypeScript sources (no build step needed).
export default defineConfig({
  resolve: { conditions: ['memlayer-source'] },
  ssr: { resolve: { conditions: ['memlayer-source'] } },
  test: { include: ['test/**/*.test.ts'] },
});

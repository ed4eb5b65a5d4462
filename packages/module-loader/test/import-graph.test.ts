// Importing the built package loads its bundle and @memlayer/internal only; the packages a
// program needs are loaded by its first use, synchronously (the API stays synchronous), and
// the simulated Ascend device's package not at all when no method runs on it. The build is
// what users import, so this runs dist/ in a fresh process (turbo builds before tests).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const FIXTURE = fileURLToPath(new URL('./fixtures/import-graph.mjs', import.meta.url));

test('import loads no other package; first use loads what it needs', () => {
  const child = spawnSync(process.execPath, [FIXTURE], { encoding: 'utf8', timeout: 110_000 });
  expect(child.status, child.stderr).toBe(0);
  const result = JSON.parse(child.stdout.trim().split('\n').at(-1) as string);
  expect(result.atImport).toEqual({ imported: ['internal', 'module-loader'], required: [] });
  expect(result.afterUse.required).toEqual(['mmap-native', 'xnnpack-cache']);
  expect(result.afterUse.imported).toEqual(['internal', 'module-loader']);
  expect(result.y).toEqual([11]);
  expect(result.exported).toEqual(['forward']);
});

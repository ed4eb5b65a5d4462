import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildChipCallable } from '@memlayer/device-runner';
import { afterAll, expect, test } from 'vitest';
import { elfSymbolBomb } from './fixtures/elf-symbol-bomb.js';

const CHILD = fileURLToPath(new URL('./fixtures/load-callable.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'memlayer-bomb-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('an orchestration ELF of 2^20 symbols naming one 16 KiB string is a typed error, not an abort', () => {
  const callable = buildChipCallable({
    orch: elfSymbolBomb(),
    children: [{ funcId: 0, core: { binary: new Uint8Array(64) } }],
  });
  writeFileSync(join(dir, 'npu.chipcallable'), callable);
  writeFileSync(
    join(dir, 'program.json'),
    JSON.stringify({
      format: 'memlayer-program',
      version: 1,
      methods: {
        npu: { backend: 'AscendSimBackend', callable: 'npu.chipcallable', callableId: 2 },
      },
    }),
  );
  // 512 MiB of heap is 20 times the file: a parser that expands names per symbol (16 GiB)
  // aborts the child, which fails this test instead of the test runner.
  const result = spawnSync(
    process.execPath,
    [
      '--max-old-space-size=512',
      '--conditions=memlayer-source',
      '--import',
      'tsx',
      CHILD,
      join(dir, 'program.json'),
    ],
    { encoding: 'utf8', timeout: 90_000 },
  );
  expect(result.signal, result.stderr.slice(0, 2000)).toBeNull();
  expect(result.status, result.stderr.slice(0, 2000)).toBe(0);
  const report = JSON.parse(result.stdout.trim()) as { code: string; cause?: string };
  expect(report.code).toBe('ERR_BACKEND_INIT_FAILED');
  expect(report.cause).toMatch(/^ERR_/);
});

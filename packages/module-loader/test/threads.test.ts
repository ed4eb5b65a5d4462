// The Module's `threads` reaches the native kernels: a run with threads 2 splits large
// layers over the kernels' own pool (one more thread in the process) and gives the same
// bits as threads 1. Fresh processes: the pool lives as long as its process.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { loadGemmKernels } from '@memlayer/mmap-native';
import { afterEach, describe, expect, test } from 'vitest';
import { exportProgram, Module } from '../src/index.js';
import { writeMlpProgram } from './fixtures.js';

const CHILD = join(import.meta.dirname, 'fixtures', 'threads-child.ts');
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function runWithThreads(pte: string, ptd: string, threads: number) {
  const result = spawnSync(
    process.execPath,
    ['--conditions=memlayer-source', '--import', 'tsx', CHILD, pte, ptd, String(threads), '16'],
    { encoding: 'utf8', cwd: join(import.meta.dirname, '..') },
  );
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as { threadsGained: number; output: string };
}

describe('Module threads', () => {
  test('refuses anything but an integer from 1 to 256', () => {
    for (const threads of [0, -1, 1.5, 257, Number.NaN, '2', null]) {
      expect(() => new Module('model.pte', { threads: threads as number })).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }),
      );
    }
    expect(new Module('model.pte', { threads: 256 }).threads).toBe(256);
    expect(new Module('model.pte').threads).toBe(1);
  });

  test('threads 2 splits 512-wide layers over a pool thread and changes no output bit', async () => {
    // This machine builds the addon (pnpm test stops without a compiler): the kernels are here.
    expect(loadGemmKernels()).not.toBeNull();
    const fixture = writeMlpProgram([512, 512, 512, 64]);
    cleanups.push(fixture.cleanup);
    const { pte, ptd } = await exportProgram(fixture.manifestPath);
    const single = runWithThreads(pte, ptd as string, 1);
    const split = runWithThreads(pte, ptd as string, 2);
    expect(single.threadsGained).toBe(0);
    expect(split.threadsGained).toBe(1);
    expect(split.output).toBe(single.output);
  });
});

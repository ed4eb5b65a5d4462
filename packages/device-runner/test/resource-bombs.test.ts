// Hostile objects must fail with a typed error, not exhaust the heap. Each runs in a child
// process with a 256 MiB heap so an abort fails this test rather than the whole suite.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

function runChild(script: string, extraArgs: string[] = []) {
  const child = spawnSync(
    process.execPath,
    [
      '--max-old-space-size=256',
      ...extraArgs,
      '--conditions=memlayer-source',
      '--import',
      'tsx',
      script,
    ],
    { cwd: packageDir, encoding: 'utf8', maxBuffer: 16 << 20, timeout: 110_000 },
  );
  const last = child.stdout.trim().split('\n').at(-1) ?? '';
  return { status: child.status, signal: child.signal, stderr: child.stderr, last };
}

describe('resource bombs', () => {
  it('symbol-name bombs fail with ERR_ELF_LIMIT_EXCEEDED in a 256 MiB heap', () => {
    const child = runChild('test/fixtures/parse-bombs.ts');
    expect(child.status, child.stderr.slice(-2000)).toBe(0);
    interface Outcome {
      bytes: number;
      parse: unknown;
      device: unknown;
      host: unknown;
      committedAfter: number;
    }
    const results = JSON.parse(child.last) as Record<string, Outcome>;
    expect(results['issue-16']?.bytes).toBeGreaterThan(24 << 20);
    for (const name of ['issue-16', 'name-budget', 'long-name']) {
      const r = results[name] as Outcome;
      expect(r.parse, name).toEqual({ code: 'ERR_ELF_LIMIT_EXCEEDED' });
      expect(r.device, name).toEqual({
        code: 'ERR_AICPU_LOAD_FAILED',
        cause: 'ERR_ELF_LIMIT_EXCEEDED',
      });
      expect(r.host, name).toEqual({
        code: 'ERR_HOST_LOAD_FAILED',
        cause: 'ERR_ELF_LIMIT_EXCEEDED',
      });
      expect(r.committedAfter, name).toBe(0);
    }
  });
});

describe('heap budget', () => {
  it('no parsed object holds more than 16 heap bytes per input byte (+1 MiB), 120 seeded hostile inputs', () => {
    const child = runChild('test/fixtures/heap-budget.ts', ['--expose-gc']);
    expect(child.status, child.stderr.slice(-2000)).toBe(0);
    const { worst, parsed, refused } = JSON.parse(child.last) as {
      worst: { excess: number; ratio: number };
      parsed: number;
      refused: number;
    };
    console.log(`heap budget: worst ${worst.ratio.toFixed(2)} bytes per input byte`, worst);
    // Both outcomes occur, so the bound is checked on results that were kept.
    expect(parsed).toBeGreaterThan(10);
    expect(refused).toBeGreaterThan(10);
    expect(worst.excess).toBeLessThanOrEqual(1 << 20);
  });
});

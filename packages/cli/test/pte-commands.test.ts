import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeDemoModel } from '../src/demo/model.js';
import { memlayer, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => void;
let programPath: string;
let pte: string;
let ptd: string;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir());
  programPath = writeDemoModel(dir, 4, 64).programPath;
  const exported = await memlayer(['export', programPath, '--out', join(dir, 'out'), '--json']);
  expect(exported.status, exported.stderr).toBe(0);
  ({ pte, ptd } = JSON.parse(exported.stdout));
});
afterAll(() => cleanup());

describe('memlayer export, run, inspect and verify of ExecuTorch programs', () => {
  test('export writes a .pte and a .ptd; run gives the JSON program outputs (GELU made exact), cold then warm', async () => {
    expect(existsSync(pte) && existsSync(ptd)).toBe(true);
    const json = JSON.parse(
      (await memlayer(['run', programPath, '--batch', '2', '--json'])).stdout,
    );
    const cache = join(dir, 'pte.xpwc');
    const cold = await memlayer([
      'run',
      pte,
      '--data',
      ptd,
      '--cache',
      cache,
      '--batch',
      '2',
      '--json',
    ]);
    expect(cold.status, cold.stderr).toBe(0);
    const coldReport = JSON.parse(cold.stdout);
    expect(coldReport).toMatchObject({ packs: 4, cacheHits: 0, operators: 4 });
    // The demo's JSON gelu is the tanh approximation; exported, it is XNNGelu, exact GELU.
    expect(coldReport.outputs[0].shape).toEqual(json.outputs[0].shape);
    for (const [i, value] of coldReport.outputs[0].first.entries()) {
      expect(Math.abs(value - json.outputs[0].first[i])).toBeLessThan(1e-3);
    }
    const warm = JSON.parse(
      (await memlayer(['run', pte, '--data', ptd, '--cache', cache, '--batch', '2', '--json']))
        .stdout,
    );
    expect(warm).toMatchObject({ packs: 0, cacheHits: 4 });
    expect(warm.outputs).toEqual(coldReport.outputs);
  });

  test('run without the .ptd is a usage error naming --data', async () => {
    const run = await memlayer(['run', pte]);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('ERR_DATA_FILE_REQUIRED');
  });

  test('inspect lists the method, its delegate, nodes and constant keys', async () => {
    const text = await memlayer(['inspect', pte, '--data', ptd]);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toContain('method "forward"');
    expect(text.stdout).toContain('XnnpackBackend');
    expect(text.stdout).toContain('runs here: yes');
    const json = JSON.parse((await memlayer(['inspect', pte, '--json'])).stdout);
    const constants = json.methods[0].delegates[0].constants;
    expect(constants.length).toBeGreaterThan(0);
    for (const constant of constants) expect(constant.key).toMatch(/^[0-9a-f]{64}$/);
  });

  test('verify --program re-hashes the constants: ok, then exit 1 on a changed byte', async () => {
    const ok = await memlayer(['verify', '--program', pte, '--data', ptd]);
    expect(ok.status, ok.stderr).toBe(0);
    const bad = join(dir, 'bad.ptd');
    const bytes = readFileSync(ptd);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 1;
    writeFileSync(bad, bytes);
    const failed = await memlayer(['verify', '--program', pte, '--data', bad, '--json']);
    expect(failed.status).toBe(1);
    expect(JSON.parse(failed.stdout).findings[0].code).toBe('CONSTANT_MISMATCH');
  });
});

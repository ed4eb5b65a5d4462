import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  BackendOptions,
  createDefaultRegistry,
  LoadBackendOptionsMap,
  Module,
  SourceRecord,
  savePendingMemoFiles,
  verifyWeightSources,
} from '../src/index.js';
import { backdate, programInput, writeLinearProgram } from './weights-programs.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memlayer-verify-'));
});
afterEach(() => {
  savePendingMemoFiles(); // saves left for later by this test's loads, before the folder goes
  rmSync(dir, { recursive: true, force: true });
});

describe('verifyWeightSources (memlayer verify --full with the program)', () => {
  test('ok after a load; a tampered digest is a mismatch; a rewritten file is changed', () => {
    const program = writeLinearProgram(join(dir, 'p'), [
      { weight: 'w0', bias: 'b0', out: 12, in: 8, seed: 1 },
      { weight: 'w1', out: 4, in: 12, seed: 2, file: 1 },
    ]);
    const cachePath = join(dir, 'cache.xpwc');
    const module = new Module(program, { registry: createDefaultRegistry() });
    module.load(
      new LoadBackendOptionsMap().setOptions(
        'XnnpackBackend',
        new BackendOptions().setOption('packed_cache_path', cachePath),
      ),
    );
    module.execute('forward', [programInput(module.programManifest())]);
    module.dispose();

    const clean = verifyWeightSources(cachePath, program);
    expect(clean.files.map((f) => [f.status, f.tensors])).toEqual([
      ['ok', 2],
      ['ok', 1],
    ]);
    // Nothing was taken from memory: every recorded tensor was read and hashed again.
    expect(clean.stats.tensorsHashed).toBe(3);

    // A record that disagrees with the bytes, written through the record's own API.
    const first = realpathSync(join(dir, 'p', 'weights-0.safetensors'));
    const known = new SourceRecord(cachePath).entry(first);
    if (known === undefined) throw new Error('the load recorded no weights-0');
    const digests = known.digests;
    digests.set('w0', 'f'.repeat(64));
    const { identity, readAtNs, tensors } = known;
    expect(new SourceRecord(cachePath).save([{ identity, readAtNs, tensors, digests }])).toBe(true);
    const tampered = verifyWeightSources(cachePath, program);
    expect(tampered.files[0]).toMatchObject({ status: 'mismatch', mismatched: ['w0'] });

    const second = join(dir, 'p', 'weights-1.safetensors');
    writeFileSync(second, readFileSync(second));
    backdate(second);
    expect(verifyWeightSources(cachePath, program).files[1]?.status).toBe('changed');
  });
});

describe('the record next to a cache', () => {
  test('digests added to a file learnt from the record are written back', () => {
    const program = writeLinearProgram(join(dir, 'p'), [
      { weight: 'w0', out: 4, in: 4, seed: 1 },
      { weight: 'w1', out: 4, in: 4, seed: 2 },
    ]);
    const cachePath = join(dir, 'cache.xpwc');
    const options = new LoadBackendOptionsMap().setOptions(
      'XnnpackBackend',
      new BackendOptions().setOption('packed_cache_path', cachePath),
    );
    // A method using only w0 first: the record knows one digest.
    const manifest = JSON.parse(readFileSync(program, 'utf8'));
    manifest.methods.first = {
      ...manifest.methods.forward,
      graph: [manifest.methods.forward.graph[0]],
      outputs: ['h0'],
    };
    writeFileSync(program, JSON.stringify(manifest));
    const weights = realpathSync(join(dir, 'p', 'weights-0.safetensors'));
    const digestsInRecord = () => new SourceRecord(cachePath).entry(weights)?.digests.size;
    const module = new Module(program, { registry: createDefaultRegistry() });
    module.load(options);
    module.loadMethod('first');
    expect(digestsInRecord()).toBe(1);
    module.loadMethod('forward');
    expect(digestsInRecord()).toBe(2);
    module.dispose();
  });
});

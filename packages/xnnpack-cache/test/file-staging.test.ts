import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTrailer } from '@memlayer/cache-format';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStorage, XNNWeightsCache } from '../src/index.js';
import { makeTempDir, referenceHashes } from './file-helpers.js';
import { buildModel, type ModelSpec, outputHashes, range } from './fixtures/model.js';

const SPEC: ModelSpec = { layers: range(0, 5), inputChannels: 40, outputChannels: 24 };
const reference = referenceHashes(SPEC);

describe('file regions packed in a staging buffer, then written with pwrite', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('hands out zeroed heap bytes, then the mapped file bytes once sealed', () => {
    const path = join(dir, 'staged.xpwc');
    const storage = new FileStorage({ path, backend: 'posix' });
    storage.open({ hasEntries: false });
    const a = storage.reserve(1000, { persistable: true });
    if (a === null) throw new Error('no region');
    const staging = a.bytes;
    expect(a.zeroed).toBe(true);
    expect(staging.every((b) => b === 0)).toBe(true);
    a.bytes.fill(7);
    storage.seal(a, 1000);
    expect(a.bytes).not.toBe(staging);
    expect(a.bytes.byteLength).toBe(1000);
    expect(a.bytes.every((b) => b === 7)).toBe(true);
    // The staging buffer is reused, cleared, for the next region.
    const b = storage.reserve(500, { persistable: true });
    if (b === null) throw new Error('no region');
    expect(b.bytes.buffer).toBe(staging.buffer);
    expect(b.zeroed).toBe(true);
    expect(b.bytes.every((x) => x === 0)).toBe(true);
    // Released unsealed: never written, its buffer free again.
    storage.release(b);
    const c = storage.reserve(100, { persistable: true });
    expect(c?.bytes.buffer).toBe(staging.buffer);
    storage.close();
  });

  it('commits an entry inserted without seal(): its bytes reach the file first', () => {
    const path = join(dir, 'unsealed.xpwc');
    const storage = new FileStorage({ path, backend: 'posix', commit: 'finalize' });
    storage.open({ hasEntries: false });
    const region = storage.reserve(4096, { persistable: true });
    if (region === null) throw new Error('no region');
    region.bytes.fill(0x5a);
    storage.persist([{ name: 'w', seed: 1, fingerprint: 1, dataSize: 4096, region }]);
    storage.close();
    const bytes = new Uint8Array(readFileSync(path));
    const [entry] = readTrailer(bytes, bytes.byteLength).trailer.entries;
    if (entry === undefined) throw new Error('no entry');
    const data = bytes.subarray(Number(entry.fileOffset), Number(entry.fileOffset) + 4096);
    expect(data.every((x) => x === 0x5a)).toBe(true);
  });

  it('runs on the written bytes, and a fresh cache loads the same outputs', () => {
    const path = join(dir, 'model.xpwc');
    const cold = new XNNWeightsCache({ path, backend: 'posix' });
    const built = buildModel(cold, SPEC);
    expect(outputHashes(built.ops, SPEC.inputChannels)).toEqual(reference);
    expect(cold.stats().heapBytes).toBe(0);
    cold.close();
    const warm = new XNNWeightsCache({ path, backend: 'posix', verify: 'full' });
    const loaded = buildModel(warm, SPEC);
    expect(loaded.ops.every((op) => op.cacheHit)).toBe(true);
    expect(outputHashes(loaded.ops, SPEC.inputChannels)).toEqual(reference);
    warm.close();
  });
});

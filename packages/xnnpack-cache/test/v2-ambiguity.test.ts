// A v2 (ExecuTorch-format) file stores no layout: an entry is told apart only by its name,
// seed and size. [24 out, 32 in] and [32, 24] with the same weight bytes and no bias share
// all three (content-keyed names, an XOR seed, the same aligned size), so such an entry is
// a miss, counted and warned once, never served to the other shape.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createFullyConnectedNcF32,
  FileStorage,
  InMemoryNamedDataMap,
  packingStats,
  resetPackingStats,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';
import { captureWarnings, makeTempDir } from './file-helpers.js';
import { randomFloats, referenceMatmul } from './reference.js';

const WEIGHTS = randomFloats(24 * 32, 7);

/** One build of layers named `w<i>` over the same bytes, each [nc, kc], no bias. */
function build(path: string, nc: number, kc: number, layers = 1) {
  const storage = new FileStorage({ path, format: 2 });
  // nr8kr1sr1 on any CPU: the shapes below share a packed size under that tiling (an
  // AVX-512 CPU's default nr16 would pad them apart).
  const cache = new XNNWeightsCache({ storage, cpuFeatures: null });
  const names = Array.from({ length: layers }, (_, i) => `w${i}`);
  cache.initializeForRuntime(
    new InMemoryNamedDataMap(names.map((name) => tensorView(name, [nc, kc], WEIGHTS))),
  );
  resetPackingStats();
  const ops = names.map((name) =>
    createFullyConnectedNcF32({
      cache,
      inputChannels: kc,
      outputChannels: nc,
      kernel: cache.loadUnpackedData(name),
      bias: null,
    }),
  );
  cache.finalizeForRuntime();
  const x = randomFloats(2 * kc, 11);
  const expected = referenceMatmul(x, 2, WEIGHTS, null, nc, kc);
  const exact = ops.every((op) =>
    op.run(x, 2).every((y, i) => Math.abs(y - (expected[i] as number)) < 1e-4),
  );
  const result = {
    packed: packingStats().calls,
    stats: cache.stats(),
    exact,
    format: storage.info().format,
  };
  cache.close();
  return result;
}

describe('a v2 entry whose seed and size another shape shares', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('is a miss for the transposed shape: repacked, counted, warned once, exact', async () => {
    const path = join(dir, 'transposed.bin');
    expect(build(path, 24, 32, 2)).toMatchObject({ packed: 2, exact: true, format: 2 });
    const warnings = captureWarnings();
    const other = build(path, 32, 24, 2);
    expect(other).toMatchObject({ packed: 2, exact: true, format: 2 });
    expect(other.stats.ambiguousRejects).toBe(2);
    expect(other.stats.hits).toBe(0);
    const codes = await warnings.stop();
    expect(codes.filter((c) => c === 'MEMLAYER_CACHE_AMBIGUOUS_ENTRY')).toHaveLength(1);
  });

  it('is a miss for its own shape too: v2 cannot say which of the two it was packed for', () => {
    const path = join(dir, 'same-shape.bin');
    build(path, 24, 32);
    const again = build(path, 24, 32);
    expect(again).toMatchObject({ packed: 1, exact: true });
    expect(again.stats.ambiguousRejects).toBe(1);
  });

  it('still hits where no other shape has the seed and size ([128, 128])', () => {
    const path = join(dir, 'square.bin');
    const square = randomFloats(128 * 128, 3);
    const storage = () => new FileStorage({ path, format: 2 });
    for (const expectedPacks of [1, 0]) {
      const cache = new XNNWeightsCache({ storage: storage() });
      cache.initializeForRuntime(new InMemoryNamedDataMap([tensorView('sq', [128, 128], square)]));
      resetPackingStats();
      const op = createFullyConnectedNcF32({
        cache,
        inputChannels: 128,
        outputChannels: 128,
        kernel: cache.loadUnpackedData('sq'),
        bias: null,
      });
      cache.finalizeForRuntime();
      expect(packingStats().calls).toBe(expectedPacks);
      expect(op.cacheHit).toBe(expectedPacks === 0);
      expect(cache.stats().ambiguousRejects).toBe(0);
      cache.close();
    }
  });
});

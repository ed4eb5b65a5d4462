import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTrailer } from '@memlayer/cache-format';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type CpuFeatures,
  fullyConnectedSeed,
  gemmGoiLayout,
  PACKED_ALLOCATION_ALIGNMENT,
  packF32GemmGoiW,
  packingStats,
  resetPackingStats,
  roundUp,
  XNNWeightsCache,
  xnnpackGemmTiling,
} from '../src/index.js';
import { BACKENDS, captureWarnings, makeTempDir, referenceHashes } from './file-helpers.js';
import { buildModel, type ModelSpec, modelWeights, outputHashes, range } from './fixtures/model.js';

const SPEC: ModelSpec = { layers: range(0, 3), inputChannels: 40, outputChannels: 24 };
const PAGE = 4096;
/** The CPU ExecuTorch wrote the file on: AVX-512F, where 24 outputs take the nr2 config (nr16). */
const CPU: CpuFeatures = {
  arch: 'x64',
  sse2: true,
  avx: true,
  fma3: true,
  avx512f: true,
  zen: false,
};

/**
 * An ExecuTorch cache file built byte by byte from the v2 table (ExecuTorch's XNNWeightsCache save code), not with
 * the encoder: packed regions at page-aligned offsets from 0, then the entries, then the
 * 20-byte footer. `version: 1` writes the older layout without seeds.
 */
function executorchFile(version: 1 | 2): Uint8Array {
  const weights = modelWeights(SPEC);
  const { nr, kr, sr } = xnnpackGemmTiling(CPU, SPEC.outputChannels);
  expect(nr).toBe(16);
  const shape = { nc: SPEC.outputChannels, kc: SPEC.inputChannels, nr, kr, sr, extraBytes: 0 };
  const size = roundUp(gemmGoiLayout(shape).packedBytes, PACKED_ALLOCATION_ALIGNMENT);
  const seed = fullyConnectedSeed({
    outputChannels: SPEC.outputChannels,
    inputChannels: SPEC.inputChannels,
    nr,
    kr,
    sr,
  });
  const regions = SPEC.layers.map((layer, i) => {
    const bytes = new Uint8Array(size);
    const kernel = weights.get(`layer${layer}.weight`)?.data ?? new Float32Array();
    const bias = weights.get(`layer${layer}.bias`)?.data ?? null;
    packF32GemmGoiW(shape, kernel, bias, bytes);
    return {
      name: `layer${layer}.weightlayer${layer}.bias`,
      offset: i * roundUp(size, PAGE),
      bytes,
    };
  });
  const indexStart = regions.length * roundUp(size, PAGE);
  const parts: number[] = [];
  const u32 = (v: number) => parts.push(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24);
  const u64 = (v: number) => {
    u32(v % 2 ** 32);
    u32(Math.floor(v / 2 ** 32));
  };
  for (const region of regions) {
    const name = new TextEncoder().encode(region.name);
    u32(name.byteLength);
    parts.push(...name);
    u64(region.offset);
    u64(region.bytes.byteLength);
    if (version === 2) u32(seed);
  }
  u64(indexStart);
  u32(regions.length);
  u32(0x58505743); // "XPWC": bytes 43 57 50 58
  u32(version);
  const file = new Uint8Array(indexStart + parts.length);
  for (const region of regions) file.set(region.bytes, region.offset);
  file.set(parts, indexStart);
  return file;
}

const reference = referenceHashes(SPEC);

describe.each(BACKENDS)('files of other writers (%s backend)', (backend) => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('loads a v2 file written by ExecuTorch: zero packing, same outputs', () => {
    const path = join(dir, 'executorch-v2.bin');
    const bytes = executorchFile(2);
    expect([...bytes.subarray(-8, -4)]).toEqual([0x43, 0x57, 0x50, 0x58]);
    writeFileSync(path, bytes);
    resetPackingStats();
    const cache = new XNNWeightsCache({ path, backend, verify: 'full', cpuFeatures: CPU });
    const { ops } = buildModel(cache, SPEC);
    expect(packingStats().calls).toBe(0);
    expect(outputHashes(ops, SPEC.inputChannels)).toEqual(reference);
    cache.close();
    // Nothing new was packed: the ExecuTorch file is left byte for byte as it was.
    expect(new Uint8Array(readFileSync(path))).toEqual(bytes);
  });

  it('treats a v1 file as stale: rebuilt as v2 (what ExecuTorch writes), never loaded as seed 0', async () => {
    const path = join(dir, 'executorch-v1.bin');
    writeFileSync(path, executorchFile(1));
    const warnings = captureWarnings();
    resetPackingStats();
    const cache = new XNNWeightsCache({ path, backend, cpuFeatures: CPU });
    const { ops } = buildModel(cache, SPEC);
    expect(await warnings.stop()).toContain('MEMLAYER_CACHE_REBUILT');
    expect(packingStats().calls).toBe(3);
    expect(outputHashes(ops, SPEC.inputChannels)).toEqual(reference);
    cache.close();
    const after = new Uint8Array(readFileSync(path));
    const { trailer } = readTrailer(after, after.byteLength);
    expect(trailer.version).toBe(2);
    expect(trailer.entries).toHaveLength(3);
  });
});

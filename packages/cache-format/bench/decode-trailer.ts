// Decode time of a trailer with 10k and 100k entries, v2 and v3. Printed, not asserted.
//   pnpm --filter @memlayer/cache-format bench
import { performance } from 'node:perf_hooks';
import {
  decodeTrailer,
  encodeTrailer,
  V3_HEADER_SIZE,
  type XpwcEntryV2,
  type XpwcEntryV3,
} from '../src/index.js';

function makeEntries(count: number): XpwcEntryV3[] {
  const entries: XpwcEntryV3[] = [];
  for (let i = 0; i < count; i++) {
    entries.push({
      // Realistic ExecuTorch keys: weight name + bias name.
      name: `model.layers.${i >> 3}.mlp.proj_${i & 7}.weightmodel.layers.${i >> 3}.mlp.proj_${i & 7}.bias`,
      fileOffset: V3_HEADER_SIZE + i * 65536,
      dataSize: 65536 - (i % 4096),
      seed: (i * 2654435761) >>> 0,
      fingerprint: 0x1234,
      crc32c: (i * 40503) >>> 0,
    });
  }
  return entries;
}

function bench(label: string, bytes: Uint8Array, end: number, count: number): void {
  // Warm up, then time enough iterations for ~1 s.
  for (let i = 0; i < 3; i++) decodeTrailer(bytes, end);
  let iterations = 0;
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < 1000 || iterations < 3) {
    const t = decodeTrailer(bytes, end);
    if (t.entries.length !== count) throw new Error('bad decode');
    iterations++;
    elapsed = performance.now() - started;
  }
  const perDecode = elapsed / iterations;
  console.log(
    `${label.padEnd(16)} ${String(count).padStart(7)} entries  ${(bytes.length / 1024 / 1024).toFixed(2).padStart(6)} MiB  ` +
      `${perDecode.toFixed(2).padStart(8)} ms/decode  ${((count / perDecode) * 1000).toExponential(2)} entries/s`,
  );
}

console.log(`node ${process.version}, ${process.arch}`);
for (const count of [10_000, 100_000]) {
  const entries = makeEntries(count);
  const indexStart = V3_HEADER_SIZE + count * 65536;
  const v2Entries: XpwcEntryV2[] = entries.map(({ name, fileOffset, dataSize, seed }) => ({
    name,
    fileOffset,
    dataSize,
    seed,
  }));
  const v2 = encodeTrailer(v2Entries, { version: 2, indexStart });
  bench('v2 decodeTrailer', v2, indexStart + v2.length, count);
  const v3 = encodeTrailer(entries, {
    indexStart,
    identity: 'xnnpack 2025.1 / x86_64 avx512 / gemm 4x16',
  });
  bench('v3 decodeTrailer', v3, indexStart + v3.length, count);
}

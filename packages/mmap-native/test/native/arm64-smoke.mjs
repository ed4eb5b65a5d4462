// The addon built for arm64, loaded by arm64 Node through the package's own loader (as an
// installed platform package), its arm64 paths run through the public API. Run by
// scripts/arm64-check.sh under qemu-user: node arm64-smoke.mjs <package dir> <scratch dir>.
// Prints one line; exits 1 on the first failure.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [packageDir, scratch] = process.argv.slice(2);
const api = await import(pathToFileURL(join(packageDir, 'dist', 'index.js')).href);
let checks = 0;

function expect(what, ok, detail = '') {
  checks++;
  if (!ok) {
    console.log(`arm64 addon: ${what} failed ${detail}`);
    process.exit(1);
  }
}

expect('arch', process.arch === 'arm64', process.arch);
expect('the addon loads', api.getBackend().name === 'posix', api.getBackend().name);
expect('x86Cpu() is null off x86-64', api.x86Cpu() === null);

// CRC32C: the CPU's instruction, the check value, and a bitwise CRC at many lengths.
expect(
  'crc32c implementation',
  api.crc32cImplementation() === 'armv8-crc32',
  api.crc32cImplementation(),
);
expect('crc32c check value', api.crc32c(new TextEncoder().encode('123456789')) === 0xe3069283);
function bitwise(bytes) {
  let crc = ~0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = (crc >>> 1) ^ (0x82f63b78 & -(crc & 1));
  }
  return ~crc >>> 0;
}
const noise = Uint8Array.from({ length: 300 }, (_, i) => (i * 2654435761) >>> 24);
for (let length = 0; length <= 300; length += 7) {
  const bytes = noise.subarray(300 - length);
  expect(`crc32c of ${length} bytes`, api.crc32c(bytes) === bitwise(bytes));
}

// GEMM: NEON is this CPU's widest set; its outputs against a float64 oracle.
const gemm = api.loadGemmKernels();
expect(
  'gemm isas',
  JSON.stringify(gemm?.isas) === '["neon","portable"]',
  JSON.stringify(gemm?.isas),
);
function floats(n, seed) {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return (s / 2 ** 32) * 2 - 1;
  });
}
for (const [nc, kc, nr] of [
  [17, 9, 16],
  [40, 33, 8],
  [129, 65, 16],
  [5, 3, 2],
]) {
  const blocks = Math.ceil(nc / nr);
  const kernel = floats(nc * kc, nc);
  const bias = floats(nc, kc);
  // XNNPACK's layout with kr = sr = 1: per block, nr biases then nr weights per input column.
  const packed = new Float32Array(blocks * nr * (1 + kc)).fill(Number.NaN);
  for (let b = 0; b < blocks; b++) {
    const base = b * nr * (1 + kc);
    for (let o = 0; o < nr && b * nr + o < nc; o++) {
      packed[base + o] = bias[b * nr + o];
      for (let k = 0; k < kc; k++) packed[base + nr + k * nr + o] = kernel[(b * nr + o) * kc + k];
    }
  }
  const shape = { nc, kc, nr, kr: 1, sr: 1, extraBytes: 0 };
  for (const batch of [1, 5, 7, 13]) {
    const input = floats(batch * kc, batch);
    for (const threads of [1, 2]) {
      const output = gemm.gemmF32(new Uint8Array(packed.buffer), shape, input, batch, {
        isa: 'neon',
        threads,
        outputMin: -0.75,
        outputMax: 0.75,
      });
      for (let r = 0; r < batch; r++) {
        for (let o = 0; o < nc; o++) {
          let acc = bias[o];
          for (let k = 0; k < kc; k++) acc += kernel[o * kc + k] * input[r * kc + k];
          const want = Math.min(Math.max(Math.fround(acc), -0.75), 0.75);
          const got = output[r * nc + o];
          expect(
            `gemm nc ${nc} kc ${kc} nr ${nr} batch ${batch} threads ${threads}`,
            Math.abs(got - want) <= 1e-5 * (1 + Math.abs(want)),
            `output ${r * nc + o}: ${got}, expected ${want}`,
          );
        }
      }
    }
  }
}

// A file mapped read-only: the bytes written are the bytes seen.
const path = join(scratch, 'mapped.bin');
writeFileSync(path, noise);
const file = api.openMappedFile(path, { mode: 'r' });
const mapping = file.map(0, noise.length, { writable: false });
expect('mapped bytes', Buffer.compare(Buffer.from(mapping.bytes()), Buffer.from(noise)) === 0);
mapping.close();
file.close();

console.log(`arm64 addon: ${checks} checks passed (arm64 Node ${process.version} under qemu-user)`);

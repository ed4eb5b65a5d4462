// The addon's scenarios as a plain Node script (no test runner, no TypeScript loader), so
// valgrind sees only Node and mmap_native.node. Used by scripts/valgrind.sh.
// Usage: node --expose-gc scripts/valgrind-scenarios.mjs [rounds]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getSystemErrorName } from 'node:util';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const addon = createRequire(import.meta.url)(
  join(packageDir, 'addon/build/Release/mmap_native.node'),
);

class MmapError extends Error {
  constructor(message, details) {
    const code = details.code ?? getSystemErrorName(-details.errno);
    super(message ?? `${code}, ${details.syscall}`);
    Object.assign(this, details, { code });
  }
}
addon.configure(MmapError);

const rounds = Number(process.argv[2] ?? 3);
const dir = mkdtempSync(join(tmpdir(), 'mmap-native-valgrind-'));
const page = addon.pageSize();
const MAX = 2 ** 32;
const RW = 2;
const failures = [];

function expectCode(code, fn) {
  try {
    fn();
  } catch (error) {
    if (error.code === code || error.name === code) return;
    failures.push(`expected ${code}, got ${error.code ?? error.name}: ${error.message}`);
    return;
  }
  failures.push(`expected ${code}, nothing thrown`);
}

// A valid XNNGraph: validGraph() of test/xnn-graph-reader.test.ts, as base64.
const XNN_GRAPH = Buffer.from(
  'IAAAAFhOMDEWABgAAAAEAAgAAAAMABAAAAAAABQAAAAYAAAAFAAAAKQAAAAEAgAACAIAAAwCAAACAAAAEAAAAEwA' +
    'AAAIAAwABAAIAAgAAAACAAAAFAAAAA4AGAAEAAgADAAQABQAAAAQAAAACgAAABQAAAD/////HgAAAAUAAAAMABAA' +
    'BAAIAAAADAAMAAAABgAAABQAAAAoAAAACgAQAAQACAAMAAAADAAAAB4AAAAoAAAAAAAAAAgADAAEAAgACAAAAAAA' +
    'AAAAAMBABAAAABgAAABkAAAAsAAAAPwAAAAIAAwABAAIAAgAAAABAAAAGAAAABIAHAAEAAAACAAMABAAFAAYAAAA' +
    'FAAAAAEAAAAUAAAAAAAAAAAAAAABAAAACgAAAAIAAAABAAAAAwAAAAgADAAEAAgACAAAAAEAAAAYAAAAEgAcAAQA' +
    'AAAIAAwAEAAUABgAAAAUAAAAAQAAABQAAAABAAAA/////wAAAAAUAAAAAgAAAAIAAAADAAAACAAMAAQACAAIAAAA' +
    'AQAAABgAAAASABwABAAAAAgADAAQABQAGAAAABQAAAABAAAAFAAAAAAAAAD/////AAAAAB4AAAACAAAAAQAAAAIA' +
    'AAAIAAwABAAIAAgAAAACAAAADAAAAAYACAAEAAAACAAAABgAAAASABwABAAAAAgADAAQABQAGAAAABQAAAABAAAA' +
    'FAAAAAAAAAABAAAAAgAAACgAAAACAAAAAQAAAAIAAAABAAAACgAAAAEAAAAoAAAABAAAABwAAAAwAAAASAAAAFQA' +
    'AAAKAAgAAAAAAAQAAAAMAAAABAAAAAAAAAAAAAoACAAAAAAABAAKAAAABAAAAAgAAAB3ZWlnaHQtMQAABAAEAAAA' +
    'BgAAAAoACAAAAAAABAAAAAwAAAAEAAAABAAAAGNsw6kA',
  'base64',
);

function scenarios(round) {
  const path = join(dir, `file-${round}.bin`);
  const file = new addon.File(path, RW, 0o644);
  file.grow(16 * page, false);
  file.grow(2 ** 32 + 4 * page, true); // sparse, offsets past 32 bits

  // map / write / msync / madvise / mincore / unmap (twice)
  const mapping = file.map(page + 17, 8 * page, true, MAX);
  new Uint8Array(mapping.buffer).fill(round & 0xff);
  for (const mode of [0, 1, 2]) mapping.sync(0, 8 * page, mode);
  for (const advice of [0, 1, 2, 3, 4]) mapping.advise(3, page, advice);
  mapping.residency(0, 8 * page, true);
  mapping.residency(1, 0, false);
  void mapping.address;
  mapping.unmap();
  mapping.unmap();
  expectCode('ERR_MMAP_CLOSED', () => mapping.sync(0, 1, 0));

  // far offset, read-only (private) mapping with a stray write
  const far = file.map(2 ** 32 + page, page, false, MAX);
  new Uint8Array(far.buffer)[0] = 1;
  far.unmap();

  // mappings dropped without unmap(): the finalizer unmaps them
  for (let i = 0; i < 100; i++) file.map((i % 8) * page, page, true, MAX);
  globalThis.gc?.();

  // error paths: errno errors, non-errno codes, argument errors thrown from C++
  expectCode('ERR_MMAP_PAST_EOF', () => file.map(2 ** 33, page, true, MAX));
  expectCode('ENOENT', () => new addon.File(join(dir, 'missing', 'x'), 0, 0));
  expectCode('EEXIST', () => new addon.File(path, 3, 0o644));
  expectCode('RangeError', () => file.map(-1, page, true, MAX));
  expectCode('TypeError', () => file.map('0', page, true, MAX));
  expectCode('RangeError', () => file.map(0, 0, true, MAX));

  // flock between two descriptors of this process
  const other = new addon.File(path, 1, 0);
  file.lock(2, false);
  expectCode('EAGAIN', () => other.lock(1, false));
  file.lock(0, false);
  other.lock(1, false);
  other.close();

  // positional I/O (pread/pwrite loops), fstat, the live mapping count
  const data = Uint8Array.from({ length: 3 * page + 5 }, (_, i) => i & 0xff);
  file.write(data, 2 ** 32 + 7);
  const back = new Uint8Array(data.length + 9);
  if (file.readInto(back, 2 ** 32 + 7) !== back.length) failures.push('short pread');
  if (file.readInto(back, 2 ** 32 + 4 * page - 3) !== 3) failures.push('pread past EOF');
  file.readInto(new Uint8Array(0), 0);
  void file.stat();
  void addon.liveMappings();
  expectCode('TypeError', () => file.readInto(new Uint16Array(2), 0));
  expectCode('TypeError', () => file.write('bytes', 0));
  expectCode('EFBIG', () => file.write(new Uint8Array(2), 2n ** 63n - 1n));

  // opens that are refused: not a regular file, O_NOFOLLOW on a symlink, a NUL byte
  const fifo = join(dir, `fifo-${round}`);
  execFileSync('mkfifo', [fifo]);
  expectCode('ERR_MMAP_NOT_REGULAR_FILE', () => new addon.File(fifo, 0, 0, true));
  const sub = join(dir, `dir-${round}`);
  mkdirSync(sub);
  expectCode('ERR_MMAP_NOT_REGULAR_FILE', () => new addon.File(sub, 0, 0, true));
  const link = join(dir, `link-${round}`);
  symlinkSync(path, link);
  expectCode('ELOOP', () => new addon.File(link, 0, 0, false));
  new addon.File(link, 0, 0, true).close();
  expectCode('TypeError', () => new addon.File(`${path}\0x`, 0, 0, true));

  // ftruncate: shrink, grow back sparse, refused on a read-only descriptor
  if (file.truncate(5 * page + 3) !== 5 * page + 3) failures.push('truncate size');
  file.truncate(2 ** 32 + 4 * page);
  expectCode('TypeError', () => file.truncate('1'));
  const readOnly = new addon.File(path, 0, 0, true);
  expectCode('EINVAL', () => readOnly.truncate(1));
  readOnly.close();

  // fdatasync on the thread pool, one of them still running when the file is closed
  const syncing = new addon.File(path, 1, 0);
  pendingWork.push(syncing.syncAsync(true), syncing.syncAsync(false));
  syncing.close();
  expectCode('EBADF', () => syncing.syncAsync(true));

  // pwrite on the thread pool: waited for, left running while its file is closed and its
  // buffer dropped, refused on a read-only descriptor (at wait), bad arguments
  const writing = new addon.File(path, 1, 0);
  const written = writing.writeInBackground([data, data.subarray(5)], [7, 2 ** 32]);
  written.wait();
  if (!written.done) failures.push('background write not done after wait');
  // parts that follow one another: one pwritev, empty parts among them and alone
  const empty = new Uint8Array(0);
  const joined = writing.writeInBackground(
    [empty, data, empty, data.subarray(3), empty],
    [page, page, page + data.length, page + data.length, 9 * page],
  );
  joined.wait();
  writing.writeInBackground([new Uint8Array(8 * page).fill(3)], [page]);
  writing.close();
  expectCode('EBADF', () => writing.writeInBackground([data], [0]));
  const refusing = new addon.File(path, 0, 0, true);
  const refused = refusing.writeInBackground([data, data], [0, page]);
  refusing.close();
  expectCode('EBADF', () => refused.wait());
  expectCode('TypeError', () => file.writeInBackground('bytes', [0]));
  expectCode('TypeError', () => file.writeInBackground(['bytes'], [0]));
  expectCode('RangeError', () => file.writeInBackground([data], [0, 1]));
  expectCode('EFBIG', () => file.writeInBackground([new Uint8Array(2)], [2n ** 63n - 1n]));

  file.sync(false);
  file.sync(true);
  void file.size();
  file.close();
  file.close();
  expectCode('EBADF', () => file.size());

  // pages faulted in on the thread pool: a buffer dropped while that runs, one without a
  // whole page, and a wrong argument
  pendingWork.push(
    addon.prefault(new ArrayBuffer(4 * page + 5)),
    addon.prefault(new ArrayBuffer(8)),
  );
  expectCode('TypeError', () => addon.prefault(new Uint8Array(8)));

  // CRC32C over every length and offset near the 8-byte steps, a detached view, bad arguments
  const crcBytes = new Uint8Array(64).map((_, i) => i * 37);
  for (let from = 0; from < 9; from++) {
    for (let to = from; to <= 64; to += 5) addon.crc32c(crcBytes.subarray(from, to), round);
  }
  if (addon.crc32c(Buffer.from('123456789')) !== 0xe3069283) failures.push('crc32c check value');
  const detached = new Uint8Array(new ArrayBuffer(16), 4, 8);
  structuredClone(detached.buffer, { transfer: [detached.buffer] });
  if (addon.crc32c(detached, 9) !== 9) failures.push('crc32c of a detached view');
  expectCode('ERR_INVALID_ARG_TYPE', () => addon.crc32c(new Uint16Array(4)));
  expectCode('ERR_OUT_OF_RANGE', () => addon.crc32c(crcBytes, -1));
  // GEMM kernels on every instruction set valgrind's CPU reports (its CPUID hides
  // AVX-512), on the calling thread and split over the kernels' own pool (joined at exit),
  // and argument errors thrown from C++
  const [nc, kc, batch] = [70, 300, 9];
  const packedGemm = new Float32Array(Math.ceil(nc / 16) * 16 * (1 + kc)).fill(0.25);
  const gemmInput = new Float32Array(batch * kc).fill(0.5);
  const gemmOutput = new Float32Array(batch * nc);
  // the CPU read with CPUID (an object on x86-64, null elsewhere)
  const cpu = addon.x86Cpu();
  if (process.arch === 'x64' && typeof cpu?.vendor !== 'string')
    failures.push('x86Cpu gave no vendor');
  for (const isa of addon.gemmIsas()) {
    const code = ['portable', 'sse2', 'avx2-fma', 'avx512f'].indexOf(isa);
    for (const threads of [1, 3]) {
      addon.gemmF32(
        new Uint8Array(packedGemm.buffer),
        gemmInput,
        gemmOutput,
        batch,
        nc,
        kc,
        16,
        1,
        1,
        0,
        -1,
        1e9,
        threads,
        code,
      );
      if (gemmOutput[0] !== 0.25 + 0.25 * 0.5 * kc) failures.push(`gemm ${isa}: ${gemmOutput[0]}`);
    }
  }
  expectCode('RangeError', () =>
    addon.gemmF32(
      new Uint8Array(packedGemm.buffer, 4),
      gemmInput,
      gemmOutput,
      batch,
      nc,
      kc,
      16,
      1,
      1,
      0,
      -1,
      1,
      1,
      -1,
    ),
  );

  // GEMM plans: one per instruction set run on the calling thread and split, plans
  // dropped to the collector (their finalizer frees them), runs refused in C++
  const gemmPacked = new Uint8Array(packedGemm.buffer);
  for (const isa of addon.gemmIsas()) {
    const code = ['portable', 'sse2', 'avx2-fma', 'avx512f'].indexOf(isa);
    for (const threads of [1, 3]) {
      const plan = addon.gemmF32Plan(nc, kc, 16, 1, 1, 0, -1, 1e9, threads, code);
      gemmOutput.fill(0);
      addon.gemmF32Run(plan, gemmPacked, gemmInput, gemmOutput, batch);
      if (gemmOutput[batch * nc - 1] !== 0.25 + 0.25 * 0.5 * kc) {
        failures.push(`gemm plan ${isa}: ${gemmOutput[batch * nc - 1]}`);
      }
    }
  }

  // GEMM chains: two layers run in one call with threads (the scratch grown for a larger
  // batch), chains dropped to the collector (their finalizer frees the scratch and the
  // references), a detached weights view refused in C++
  const square = addon.gemmF32Plan(kc, kc, 16, 1, 1, 0, -1, 1e9, 3, -1);
  const squarePacked = new Float32Array(Math.ceil(kc / 16) * 16 * (1 + kc)).fill(1 / 1024);
  const last = addon.gemmF32Plan(nc, kc, 16, 1, 1, 0, -1, 1e9, 1, -1);
  const chain = addon.gemmF32Chain(
    [square, last],
    [new Uint8Array(squarePacked.buffer), gemmPacked],
  );
  for (const rows of [1, batch]) {
    gemmOutput.fill(0);
    addon.gemmF32ChainRun(chain, gemmInput, gemmOutput, rows);
    if (!(gemmOutput[rows * nc - 1] > 0.25)) failures.push(`gemm chain: ${gemmOutput[0]}`);
  }
  for (let i = 0; i < 20; i++) addon.gemmF32Chain([last], [gemmPacked]);
  const doomed = new Uint8Array(packedGemm.slice().buffer);
  const doomedChain = addon.gemmF32Chain([last], [doomed]);
  structuredClone(doomed.buffer, { transfer: [doomed.buffer] });
  expectCode('RangeError', () => addon.gemmF32ChainRun(doomedChain, gemmInput, gemmOutput, 1));
  expectCode('TypeError', () => addon.gemmF32ChainRun(file, gemmInput, gemmOutput, 1));

  for (let i = 0; i < 50; i++) addon.gemmF32Plan(nc, kc, 16, 1, 1, 0, -1, 1, 1, -1);
  const gemmPlan = addon.gemmF32Plan(nc, kc, 16, 1, 1, 0, -1, 1, 1, -1);
  expectCode('TypeError', () => addon.gemmF32Run({}, gemmPacked, gemmInput, gemmOutput, batch));
  expectCode('TypeError', () => addon.gemmF32Run(file, gemmPacked, gemmInput, gemmOutput, batch));
  expectCode('RangeError', () =>
    addon.gemmF32Run(gemmPlan, gemmPacked.subarray(4), gemmInput, gemmOutput, batch),
  );
  expectCode('RangeError', () => addon.gemmF32Plan(0, kc, 16, 1, 1, 0, -1, 1, 1, -1));

  // XNNGraph reader: the graph, its truncations and a bit flipped at every third byte
  if (typeof addon.readXnnGraph(new Uint8Array(XNN_GRAPH)) === 'string') failures.push('xnn graph');
  for (let length = 0; length < XNN_GRAPH.length; length += 5) {
    addon.readXnnGraph(new Uint8Array(XNN_GRAPH.subarray(0, length)));
  }
  for (let at = round; at < XNN_GRAPH.length; at += 3) {
    const flipped = new Uint8Array(XNN_GRAPH);
    flipped[at] ^= 1 << (at % 8);
    addon.readXnnGraph(flipped);
  }
  expectCode('ERR_INVALID_ARG_TYPE', () => addon.readXnnGraph(new Uint16Array(4)));

  // a file and a mapping dropped without close(): destructor and finalizer
  const dropped = new addon.File(path, 1, 0);
  dropped.map(0, page, true, MAX);
}

// Work queued on the thread pool (syncAsync, prefault): each must settle without an error.
const pendingWork = [];
for (let round = 0; round < rounds; round++) scenarios(round);
for (const outcome of await Promise.allSettled(pendingWork)) {
  if (outcome.status !== 'fulfilled') failures.push(`thread-pool work: ${outcome.reason}`);
}
globalThis.gc?.();
await new Promise((resolve) => setImmediate(resolve));
globalThis.gc?.();
await new Promise((resolve) => setImmediate(resolve));
rmSync(dir, { recursive: true, force: true });

if (failures.length > 0) {
  console.error(failures.join('\n'));
  process.exit(1);
}
console.log(`valgrind scenarios: ${rounds} rounds passed`);

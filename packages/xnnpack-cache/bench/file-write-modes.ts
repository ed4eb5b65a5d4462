// How packed bytes can reach a cache file, measured without the cache: `layers` regions of
// `regionBytes` (default 1024 x 66,048 bytes = 1024 packed 128x128 f32 layers) are filled
// with a copy of a source buffer (standing in for packing) in one of these ways:
//   heap       into fresh ArrayBuffer memory (the heap-only baseline)
//   shared     into a fresh fallocated MAP_SHARED mapping (file mode today: first touch of
//              each page faults in a page-cache page and marks it dirty)
//   willneed   the same after madvise(MADV_WILLNEED) of the mapping (pages read in first)
//   sparse     into a MAP_SHARED mapping of a sparse (ftruncate-only) file
//   pwrite     into one reused heap buffer, then pwrite() to a fallocated file, then one
//              read-only mapping of it (what the cache would hand out)
//   pwrite-sparse  the same into a sparse file (pwrite reports ENOSPC as an error, where a
//              store into a mapping of a sparse file would raise SIGBUS)
// Each mode runs in a fresh process, interleaved, `runs` times; prints median ms per mode
// and its ratio to heap. Asserts nothing.
// Run: npx tsx --conditions=memlayer-source bench/file-write-modes.ts [--runs 5]
//   [--layers 1024] [--region-bytes 66048] [--modes heap,shared,willneed,sparse,pwrite,pwrite-sparse]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openMappedFile, pageSize } from '@memlayer/mmap-native';

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    child: { type: 'string' },
    path: { type: 'string' },
    runs: { type: 'string', default: '5' },
    layers: { type: 'string', default: '1024' },
    'region-bytes': { type: 'string', default: '66048' },
    modes: { type: 'string', default: 'heap,shared,willneed,sparse,pwrite,pwrite-sparse' },
  },
});
const layers = Number(values.layers);
const page = pageSize();
const regionBytes = Number(values['region-bytes']);
const stride = Math.ceil(regionBytes / page) * page;

function fillRegion(target: Uint8Array, source: Uint8Array): void {
  target.set(source);
}

function child(mode: string, path: string): number {
  const source = new Uint8Array(regionBytes);
  for (let i = 0; i < source.length; i++) source[i] = (i * 31) & 0xff;
  const total = stride * layers;
  const started = performance.now();
  if (mode === 'heap') {
    for (let l = 0; l < layers; l++) fillRegion(new Uint8Array(regionBytes), source);
  } else if (mode === 'pwrite' || mode === 'pwrite-sparse') {
    const file = openMappedFile(path, { mode: 'w+' });
    file.grow(total, { sparse: mode === 'pwrite-sparse' });
    const scratch = new Uint8Array(stride);
    for (let l = 0; l < layers; l++) {
      fillRegion(scratch.subarray(0, regionBytes), source);
      file.write(scratch, l * stride);
    }
    const mapping = file.map(0, total, { writable: false });
    if (mapping.buffer.byteLength !== total) throw new Error('short mapping');
    file.close();
  } else {
    const file = openMappedFile(path, { mode: 'w+' });
    file.grow(total, { sparse: mode === 'sparse' });
    const mapping = file.map(0, total, { writable: true });
    if (mode === 'willneed') mapping.advise('willneed');
    for (let l = 0; l < layers; l++) {
      fillRegion(new Uint8Array(mapping.buffer, l * stride, regionBytes), source);
    }
    file.close();
  }
  return performance.now() - started;
}

if (values.child !== undefined) {
  console.log(JSON.stringify({ ms: child(values.child, values.path ?? '') }));
} else {
  const tsx = createRequire(import.meta.url).resolve('tsx');
  const script = fileURLToPath(import.meta.url);
  const dir = mkdtempSync(join(process.env['MEMLAYER_BENCH_DIR'] ?? tmpdir(), 'xnnpack-write-'));
  const modes = values.modes.split(',');
  const samples = new Map<string, number[]>(modes.map((m) => [m, []]));
  try {
    for (let run = 0; run < Number(values.runs); run++) {
      for (const mode of modes) {
        const path = join(dir, `${mode}-${run}.bin`);
        const result = spawnSync(
          process.execPath,
          [
            '--conditions=memlayer-source',
            '--import',
            tsx,
            script,
            '--child',
            mode,
            '--path',
            path,
            '--layers',
            String(layers),
            '--region-bytes',
            String(regionBytes),
          ],
          { encoding: 'utf8' },
        );
        const line = result.stdout.split('\n').find((l) => l.startsWith('{'));
        if (line === undefined) throw new Error(`${mode} failed: ${result.stderr}`);
        samples.get(mode)?.push((JSON.parse(line) as { ms: number }).ms);
        rmSync(path, { force: true });
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
  const heap = median(samples.get('heap') ?? [Number.NaN]);
  const rows = modes.map((mode) => {
    const ms = median(samples.get(mode) ?? []);
    return { mode, ms: Math.round(ms * 10) / 10, overHeap: Math.round((ms / heap) * 100) / 100 };
  });
  console.log(JSON.stringify({ layers, regionBytes, runs: Number(values.runs), rows }, null, 2));
}

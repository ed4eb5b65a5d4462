// Peak memory of a cold load: a fresh process maps a safetensors-like file of `layers`
// f32 layers (size x size kernel + size bias, stored back to back after a JSON header),
// creates a fully-connected operator per layer through a fresh cache (heap only, or into
// a fresh cache file) and reports VmHWM (peak RSS) once finalize returns, against the
// bound packed bytes + the largest layer's unpacked bytes. The named data map releases a
// view by madvise(MADV_DONTNEED) of the whole pages it covers, as a file-backed loader
// does; `--keep` skips that, to show what the release saves.
// Run: npx tsx --conditions=memlayer-source bench/cold-load-peak.ts [--layers 1024]
//   [--size 512] [--modes heap,file] [--keep]
// Needs 2x the model's bytes free in MEMLAYER_BENCH_DIR (default: the OS temp dir).
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openMappedFile, pageSize } from '@memlayer/mmap-native';
import {
  createFullyConnectedNcF32,
  type NamedDataMap,
  packedSize,
  type TensorView,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';

interface ChildArgs {
  readonly source: string;
  readonly cachePath: string;
  readonly layers: number;
  readonly size: number;
  readonly release: boolean;
}

interface ChildReport {
  readonly startRssBytes: number;
  readonly hwmBytes: number;
  readonly rssAfterBytes: number;
  readonly packedBytes: number;
  readonly largestLayerBytes: number;
  readonly initMs: number;
}

/** A field of /proc/self/status in bytes (0 off Linux). */
function statusBytes(field: 'VmHWM' | 'VmRSS'): number {
  try {
    const text = readFileSync('/proc/self/status', 'utf8');
    return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** Header: u64 LE length, then JSON { name: { offset, length } }, padded to 8 bytes. */
function writeSource(path: string, layers: number, size: number): void {
  const kernelBytes = size * size * 4;
  const biasBytes = size * 4;
  const entries: Record<string, { offset: number; length: number }> = {};
  let at = 0;
  for (let l = 0; l < layers; l++) {
    entries[`l${l}.w`] = { offset: at, length: kernelBytes };
    at += kernelBytes;
    entries[`l${l}.b`] = { offset: at, length: biasBytes };
    at += biasBytes;
  }
  let json = JSON.stringify(entries);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
  const head = Buffer.alloc(8 + json.length);
  head.writeBigUInt64LE(BigInt(json.length));
  head.write(json, 8, 'latin1');
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, head);
    // Deterministic values, one layer's worth written at a time.
    const layer = new Float32Array((kernelBytes + biasBytes) / 4);
    for (let i = 0; i < layer.length; i++) layer[i] = ((i * 2654435761) % 1000) / 1000 - 0.5;
    const bytes = new Uint8Array(layer.buffer);
    for (let l = 0; l < layers; l++) writeSync(fd, bytes);
  } finally {
    closeSync(fd);
  }
}

/** Views into one read-only mapping of the source; release advises whole pages away. */
function mappedNamedData(path: string): NamedDataMap {
  const file = openMappedFile(path, { mode: 'r' });
  const mapping = file.map(0, file.size(), { writable: false });
  file.close();
  const bytes = new Uint8Array(mapping.buffer);
  const headerLength = Number(new DataView(mapping.buffer).getBigUint64(0, true));
  const entries = JSON.parse(Buffer.from(bytes.subarray(8, 8 + headerLength)).toString('latin1'));
  const dataStart = 8 + headerLength;
  const page = pageSize();
  const views = new Map<string, TensorView>();
  const spans = new Map<TensorView, { start: number; end: number }>();
  return {
    get(name) {
      let view = views.get(name);
      if (view !== undefined) return view;
      const entry = entries[name] as { offset: number; length: number } | undefined;
      if (entry === undefined) return undefined;
      const start = dataStart + entry.offset;
      const data = new Float32Array(mapping.buffer, start, entry.length / 4);
      const shape = name.endsWith('.w')
        ? [Math.sqrt(data.length), Math.sqrt(data.length)]
        : [data.length];
      view = tensorView(name, shape, data);
      views.set(name, view);
      spans.set(view, { start, end: start + entry.length });
      return view;
    },
    names: () => Object.keys(entries),
    release(view) {
      const span = spans.get(view);
      if (span === undefined) return;
      spans.delete(view);
      // Only pages the tensor covers whole: an edge page may hold a neighbour's bytes.
      const from = Math.ceil(span.start / page) * page;
      const to = Math.floor(span.end / page) * page;
      if (to > from) mapping.advise('dontneed', from, to - from);
    },
  };
}

function child(args: ChildArgs): void {
  const startRssBytes = statusBytes('VmRSS');
  const started = performance.now();
  const named = args.release
    ? mappedNamedData(args.source)
    : withoutRelease(mappedNamedData(args.source));
  const cache = new XNNWeightsCache(args.cachePath === '' ? {} : { path: args.cachePath });
  cache.initializeForRuntime(named);
  for (let l = 0; l < args.layers; l++) {
    createFullyConnectedNcF32({
      cache,
      inputChannels: args.size,
      outputChannels: args.size,
      kernel: cache.loadUnpackedData(`l${l}.w`),
      bias: cache.loadUnpackedData(`l${l}.b`),
    });
  }
  cache.finalizeForRuntime();
  const initMs = performance.now() - started;
  const hwmBytes = statusBytes('VmHWM');
  const shape = { nc: args.size, kc: args.size, nr: 8, kr: 1, sr: 1 };
  const report: ChildReport = {
    startRssBytes,
    hwmBytes,
    rssAfterBytes: statusBytes('VmRSS'),
    packedBytes: packedSize(shape) * args.layers,
    largestLayerBytes: (args.size * args.size + args.size) * 4,
    initMs,
  };
  console.log(JSON.stringify(report));
}

function withoutRelease(map: NamedDataMap): NamedDataMap {
  return { get: (name) => map.get(name), names: () => map.names() };
}

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    child: { type: 'string' },
    layers: { type: 'string', default: '1024' },
    size: { type: 'string', default: '512' },
    modes: { type: 'string', default: 'heap,file' },
    keep: { type: 'boolean', default: false },
  },
});

if (values.child !== undefined) {
  child(JSON.parse(values.child) as ChildArgs);
} else {
  const layers = Number(values.layers);
  const size = Number(values.size);
  const dir = mkdtempSync(join(process.env['MEMLAYER_BENCH_DIR'] ?? tmpdir(), 'xnnpack-peak-'));
  const tsx = createRequire(import.meta.url).resolve('tsx');
  const script = fileURLToPath(import.meta.url);
  const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
  try {
    const source = join(dir, 'model.safetensors');
    writeSource(source, layers, size);
    const rows = [];
    for (const mode of values.modes.split(',')) {
      const args: ChildArgs = {
        source,
        cachePath: mode === 'file' ? join(dir, 'cache.xpwc') : '',
        layers,
        size,
        release: !values.keep,
      };
      const run = spawnSync(
        process.execPath,
        ['--conditions=memlayer-source', '--import', tsx, script, '--child', JSON.stringify(args)],
        { encoding: 'utf8' },
      );
      const line = run.stdout.split('\n').find((l) => l.startsWith('{'));
      if (line === undefined) throw new Error(`child failed: ${run.stderr}`);
      const r = JSON.parse(line) as ChildReport;
      const bound = r.packedBytes + r.largestLayerBytes;
      rows.push({
        mode,
        release: args.release,
        initMs: Math.round(r.initMs),
        startRssMiB: mib(r.startRssBytes),
        hwmMiB: mib(r.hwmBytes),
        boundMiB: mib(bound),
        hwmOverBound: Math.round((r.hwmBytes / bound) * 1000) / 1000,
        loadOverBound: Math.round(((r.hwmBytes - r.startRssBytes) / bound) * 1000) / 1000,
        rssAfterMiB: mib(r.rssAfterBytes),
      });
      rmSync(args.cachePath || join(dir, 'none'), { force: true });
    }
    console.log(JSON.stringify({ layers, size, rows }, null, 2));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Starts of an ExecuTorch program (.pte + .ptd) against the same model as a JSON program,
// the warm start's floor and XNNPACK's C library creating the same operators: fresh
// processes, interleaved, medians. Prints figures; asserts nothing. The floor and every start
// but one run with the packages' code already loaded, so that they compare work with work;
// "warm .pte, loading code" also loads the lower packages, as a user's first load() does.
// The "again" rows repeat the warm start and the floor in their process, once its code has
// run: what the same work costs without a fresh process's first runs of that code.
//   node packages/bench/dist/pte-starts.js [--layers 1024] [--dim 128] [--rounds 7] [--dir d]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BackendOptions, LoadBackendOptionsMap, Module } from '@memlayer/module-loader';
// Only what a child needs is imported here: the bench's other modules load the lower
// packages, which the "loading code" start must load itself.
import { median, nowMs } from './measure.js';

const SELF = fileURLToPath(import.meta.url);

interface StartResult {
  ms: number;
  /** Of `ms`, `new Module` + `load()`: the program read, with the addon's first load. */
  programMs: number;
  /** The same start once more in the same process, its code having run once (null: not asked). */
  againMs: number | null;
  cacheHits: number;
  outputSum: number;
  output: number[];
}

/** The packages a start loads at first use (module-loader defers them). */
async function loadLowerPackages(): Promise<void> {
  await import('@memlayer/mmap-native');
  await import('@memlayer/cache-format');
  await import('@memlayer/xnnpack-cache');
}

/** A new Module of `program`, loaded with the cache, its method loaded, and how long that took. */
function timedStart(
  program: string,
  cache: string,
  data: string | undefined,
): { module: Module; ms: number; programMs: number } {
  const options = new LoadBackendOptionsMap().setOptions(
    'XnnpackBackend',
    new BackendOptions()
      .setOption('packed_cache_path', cache)
      .setOption('save_weight_cache_on_disk', true),
  );
  const start = nowMs();
  const module = new Module(program, { dataFiles: data === undefined ? [] : [data] });
  module.load(options);
  const programMs = nowMs() - start;
  module.loadMethod('forward');
  return { module, ms: nowMs() - start, programMs };
}

/**
 * In a child: one start (load + loadMethod) of `program` with the cache, then one run; with
 * `again`, one more start in the same process, whose code has run once already.
 */
function childStart(
  program: string,
  cache: string,
  data: string | undefined,
  again: boolean,
): StartResult {
  const { module, ms, programMs } = timedStart(program, cache, data);
  const handle = module.methodHandle('forward') as { cacheHits: number };
  const features = module.methodMeta('forward').inputs[0]?.at(-1) ?? 0;
  const [y] = module.execute('forward', [
    { shape: [1, features], data: new Float32Array(features).fill(0.5) },
  ]);
  const output = [...(y?.data ?? [])];
  module.dispose();
  let againMs: number | null = null;
  if (again) {
    const second = timedStart(program, cache, data);
    againMs = second.ms;
    second.module.dispose();
  }
  return {
    ms,
    programMs,
    againMs,
    cacheHits: handle.cacheHits,
    outputSum: output.reduce((a, b) => a + b, 0),
    output,
  };
}

function start(
  program: string,
  cache: string,
  data?: string,
  flag?: '--loading-code' | '--again',
): StartResult {
  const out = execFileSync(
    process.execPath,
    [
      SELF,
      '--child',
      ...(flag === undefined ? [] : [flag]),
      program,
      cache,
      ...(data ? [data] : []),
    ],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  return JSON.parse(out.trim().split('\n').pop() as string) as StartResult;
}

/** The first load of mmap-native's addon (found and opened), in a fresh process. */
function addonMs(): number {
  const out = execFileSync(process.execPath, [SELF, '--addon'], { encoding: 'utf8' });
  return Number(out.trim());
}

/** The floor in a fresh process, and once more in that process. */
function floorMs(cache: string): { first: number; again: number } {
  const out = execFileSync(process.execPath, [SELF, '--floor', cache], { encoding: 'utf8' });
  const [first, again] = out.trim().split(' ').map(Number) as [number, number];
  return { first, again };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      child: { type: 'boolean' },
      'loading-code': { type: 'boolean' },
      again: { type: 'boolean' },
      addon: { type: 'boolean' },
      floor: { type: 'boolean' },
      layers: { type: 'string', default: '1024' },
      dim: { type: 'string', default: '128' },
      rounds: { type: 'string', default: '7' },
      dir: { type: 'string' },
    },
    allowPositionals: true,
  });
  if (values.child) {
    const [program, cache, data] = positionals as [string, string, string | undefined];
    if (!values['loading-code']) await loadLowerPackages();
    const result = childStart(program, cache, data, values.again === true);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  if (values.addon) {
    const { getBackend } = await import('@memlayer/mmap-native');
    const start = nowMs();
    getBackend();
    process.stdout.write(`${nowMs() - start}\n`);
    return;
  }
  if (values.floor) {
    const { measureFloor } = await import('./floor.js');
    const first = measureFloor(positionals[0] as string).floorMs;
    const again = measureFloor(positionals[0] as string).floorMs;
    process.stdout.write(`${first} ${again}\n`);
    return;
  }
  const { writeModel } = await import('./model.js');
  const { buildNative, runNative } = await import('./native.js');
  const layers = Number(values.layers);
  const dim = Number(values.dim);
  const rounds = Number(values.rounds);
  const dir = values.dir ?? join(process.cwd(), `.bench-pte-${layers}x${dim}`);
  mkdirSync(dir, { recursive: true });
  const json = join(dir, 'program.json');
  if (!existsSync(json)) writeModel(dir, { label: `${layers}x${dim}`, layers, dim });
  const pte = join(dir, 'program.pte');
  const ptd = join(dir, 'program.ptd');
  if (!existsSync(pte)) {
    const { exportProgram } = await import('@memlayer/module-loader');
    await exportProgram(json);
  }
  const native = buildNative(join(dir, 'native'));
  const rows = {
    'cold JSON': [] as number[],
    'cold .pte': [] as number[],
    'warm JSON': [] as number[],
    'warm .pte': [] as number[],
    'warm .pte, loading code': [] as number[],
    floor: [] as number[],
    'warm .pte: program read': [] as number[],
    'addon load': [] as number[],
    'warm .pte, again': [] as number[],
    'floor, again': [] as number[],
    'XNNPACK C create': [] as number[],
  };
  let outputs: {
    coldJson: number[];
    coldPte: number[];
    warmPte: number[];
    crossed: number[];
    heap: number[];
  } | null = null;
  let hits = '';
  for (let round = 0; round < rounds; round++) {
    const jsonCache = join(dir, 'json.xpwc');
    const pteCache = join(dir, 'pte.xpwc');
    rmSync(jsonCache, { force: true });
    rmSync(pteCache, { force: true });
    const coldJson = start(json, jsonCache);
    const coldPte = start(pte, pteCache, ptd);
    const warmJson = start(json, jsonCache);
    const warmPte = start(pte, pteCache, ptd, '--again');
    const warmLoadingCode = start(pte, pteCache, ptd, '--loading-code');
    // The .pte warm start from the cache the JSON program filled: same keys, same entries.
    const crossed = start(pte, jsonCache, ptd);
    // Heap-only: no cache file, every layer packed on the heap.
    const heap = start(pte, '', ptd);
    rows['cold JSON'].push(coldJson.ms);
    rows['cold .pte'].push(coldPte.ms);
    rows['warm JSON'].push(warmJson.ms);
    rows['warm .pte'].push(warmPte.ms);
    rows['warm .pte, loading code'].push(warmLoadingCode.ms);
    const floor = floorMs(pteCache);
    rows.floor.push(floor.first);
    rows['floor, again'].push(floor.again);
    rows['warm .pte, again'].push(warmPte.againMs as number);
    rows['warm .pte: program read'].push(warmPte.programMs);
    rows['addon load'].push(addonMs());
    if (!('missing' in native))
      rows['XNNPACK C create'].push(
        runNative(native.binary, { label: '', layers, dim }, 1)[0] as number,
      );
    outputs = {
      coldJson: coldJson.output,
      coldPte: coldPte.output,
      warmPte: warmPte.output,
      crossed: crossed.output,
      heap: heap.output,
    };
    hits = `warm .pte hits ${warmPte.cacheHits}/${layers}; .pte on the JSON program's cache hits ${crossed.cacheHits}/${layers}`;
  }
  const medians: Record<string, number> = Object.fromEntries(
    Object.entries(rows).map(([label, values]) => [label, median(values)]),
  );
  console.log(
    `${layers} x ${dim}² (${((layers * (dim * dim + dim) * 4) / 2 ** 20).toFixed(0)} MiB), medians of ${rounds} rounds of fresh processes, interleaved`,
  );
  for (const [label, value] of Object.entries(medians)) {
    console.log(`${label.padEnd(24)} ${Number.isNaN(value) ? 'n/a' : `${value.toFixed(2)} ms`}`);
  }
  const ratio = (a: string, b: string) =>
    ((medians[a] as number) / (medians[b] as number)).toFixed(2);
  console.log(`warm .pte / floor        ${ratio('warm .pte', 'floor')}x`);
  console.log(`warm JSON / floor        ${ratio('warm JSON', 'floor')}x`);
  // The floor reads no program: a warm start is at least its program read (which loads the
  // addon) plus the floor's index work (the floor less its own load of the addon).
  const bound =
    (medians['warm .pte: program read'] as number) +
    (medians['floor'] as number) -
    (medians['addon load'] as number);
  console.log(
    `program read + floor's index work: ${bound.toFixed(2)} ms = ${(bound / (medians['floor'] as number)).toFixed(2)}x the floor, before any per-layer work`,
  );
  console.log(`again: warm / floor     ${ratio('warm .pte, again', 'floor, again')}x`);
  console.log(`warm .pte / again       ${ratio('warm .pte', 'warm .pte, again')}x`);
  console.log(`cold .pte / cold JSON    ${ratio('cold .pte', 'cold JSON')}x`);
  console.log(`XNNPACK C / warm .pte    ${ratio('XNNPACK C create', 'warm .pte')}x`);
  const same = (a: number[] | undefined, b: number[] | undefined) =>
    a !== undefined &&
    b !== undefined &&
    a.length === b.length &&
    a.every((v, i) => Object.is(v, b[i]));
  console.log(hits);
  console.log(
    `outputs bit-identical: cold JSON = cold .pte ${same(outputs?.coldJson, outputs?.coldPte)}, = warm .pte ${same(outputs?.coldJson, outputs?.warmPte)}, = .pte on the JSON cache ${same(outputs?.coldJson, outputs?.crossed)}, = heap-only .pte ${same(outputs?.coldJson, outputs?.heap)}`,
  );
}

await main();

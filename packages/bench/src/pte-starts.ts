// Starts of an ExecuTorch program (.pte + .ptd) against the same model as a JSON program,
// the warm start's floor and XNNPACK's C library creating the same operators: fresh
// processes, interleaved, medians. Prints figures; asserts nothing. The floor and every start
// but one run with the packages' code already loaded, so that they compare work with work;
// "warm .pte, loading code" also loads the lower packages, as a user's first load() does.
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

/** In a child: one start (load + loadMethod) of `program` with the cache, then one run. */
function childStart(program: string, cache: string, data: string | undefined): StartResult {
  const options = new LoadBackendOptionsMap().setOptions(
    'XnnpackBackend',
    new BackendOptions()
      .setOption('packed_cache_path', cache)
      .setOption('save_weight_cache_on_disk', true),
  );
  const start = nowMs();
  const module = new Module(program, { dataFiles: data === undefined ? [] : [data] });
  module.load(options);
  module.loadMethod('forward');
  const ms = nowMs() - start;
  const handle = module.methodHandle('forward') as { cacheHits: number };
  const features = module.methodMeta('forward').inputs[0]?.at(-1) ?? 0;
  const [y] = module.execute('forward', [
    { shape: [1, features], data: new Float32Array(features).fill(0.5) },
  ]);
  const output = [...(y?.data ?? [])];
  module.dispose();
  return { ms, cacheHits: handle.cacheHits, outputSum: output.reduce((a, b) => a + b, 0), output };
}

function start(program: string, cache: string, data?: string, loadingCode = false): StartResult {
  const out = execFileSync(
    process.execPath,
    [
      SELF,
      '--child',
      ...(loadingCode ? ['--loading-code'] : []),
      program,
      cache,
      ...(data ? [data] : []),
    ],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  return JSON.parse(out.trim().split('\n').pop() as string) as StartResult;
}

function floorMs(cache: string): number {
  const out = execFileSync(process.execPath, [SELF, '--floor', cache], { encoding: 'utf8' });
  return Number(out.trim());
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      child: { type: 'boolean' },
      'loading-code': { type: 'boolean' },
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
    process.stdout.write(`${JSON.stringify(childStart(program, cache, data))}\n`);
    return;
  }
  if (values.floor) {
    const { measureFloor } = await import('./floor.js');
    process.stdout.write(`${measureFloor(positionals[0] as string).floorMs}\n`);
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
    const warmPte = start(pte, pteCache, ptd);
    const warmLoadingCode = start(pte, pteCache, ptd, true);
    // The .pte warm start from the cache the JSON program filled: same keys, same entries.
    const crossed = start(pte, jsonCache, ptd);
    // Heap-only: no cache file, every layer packed on the heap.
    const heap = start(pte, '', ptd);
    rows['cold JSON'].push(coldJson.ms);
    rows['cold .pte'].push(coldPte.ms);
    rows['warm JSON'].push(warmJson.ms);
    rows['warm .pte'].push(warmPte.ms);
    rows['warm .pte, loading code'].push(warmLoadingCode.ms);
    rows.floor.push(floorMs(pteCache));
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

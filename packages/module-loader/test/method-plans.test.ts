// Method plans next to a cache file: a start of unchanged program and weights takes every
// linear node's keys from the plan (no weight table read, no node checked); any change, rot
// or mismatch falls back to the ordinary start, which gives the same outputs.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32cOf } from '@memlayer/cache-format';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import {
  BackendOptions,
  createDefaultRegistry,
  forgetSourceRecords,
  LoadBackendOptionsMap,
  MAX_METHOD_PLANS_BYTES,
  METHOD_PLAN_WARNING,
  Module,
  methodPlansPath,
  type OperatorProgress,
  processMemo,
  savePendingMemoFiles,
  sourceRecordPath,
  type WeightStats,
  type XnnpackHandle,
} from '../src/index.js';
import {
  decodePlan,
  decodePlans,
  encodePlan,
  encodePlanFile,
  type MethodPlan,
} from '../src/plans/plan-codec.js';
import {
  backdate,
  heapOnlyOutput,
  type LayerSpec,
  programInput,
  sha256,
  writeLinearProgram,
} from './weights-programs.js';

const LOAD_AND_EXIT = join(import.meta.dirname, 'fixtures', 'load-and-exit.ts');

interface Start {
  output: string;
  fromPlan: boolean;
  cacheHits: number;
  stats: WeightStats;
  warnings: string[];
}

/** One start as a fresh process makes it (memo and records forgotten), run once. */
function start(
  programPath: string,
  cachePath: string,
  onOperatorCreated?: (progress: OperatorProgress) => void,
): Start {
  processMemo.clear();
  forgetSourceRecords();
  const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
  try {
    const registry = createDefaultRegistry({
      xnnpack: onOperatorCreated === undefined ? {} : { onOperatorCreated },
    });
    const module = new Module(programPath, { registry });
    module.load(
      new LoadBackendOptionsMap().setOptions(
        'XnnpackBackend',
        new BackendOptions().setOption('packed_cache_path', cachePath),
      ),
    );
    const [output] = module.execute('forward', [programInput(module.programManifest())]);
    // What a process does at exit at the latest: each start here stands for one process.
    savePendingMemoFiles();
    const handle = module.methodHandle('forward') as XnnpackHandle;
    const result = {
      output: sha256(output?.data ?? new Float32Array(0)),
      fromPlan: handle.fromPlan,
      cacheHits: handle.cacheHits,
      stats: handle.weightStats,
      warnings: warn.mock.calls
        .filter(([, options]) => (options as { code?: string })?.code === METHOD_PLAN_WARNING)
        .map(([message]) => String(message)),
    };
    module.dispose();
    return result;
  } finally {
    warn.mockRestore();
  }
}

/**
 * Rewrites the method plan beside `cachePath` (its only plan, of a two-layer method) with
 * the entry names `change` makes of the saved ones; the file's check digest is made anew.
 */
function rewriteEntryNames(
  cachePath: string,
  change: (entryNames: [string, string]) => string[],
): void {
  rewritePlan(cachePath, (plan) => ({
    ...plan,
    entryNames: change(plan.entryNames as [string, string]),
  }));
}

/** Rewrites the only method plan beside `cachePath` as `change` makes it (check digest anew). */
function rewritePlan(cachePath: string, change: (plan: MethodPlan) => MethodPlan): void {
  const path = methodPlansPath(cachePath);
  const plan = decodePlan(decodePlans(readFileSync(path))[0]);
  writeFileSync(path, encodePlanFile([encodePlan(change(plan))]));
}

const layers = (seed: number): LayerSpec[] => [
  { weight: 'w0', bias: 'b0', out: 24, in: 16, seed },
  { weight: 'w1', bias: 'b1', out: 8, in: 24, seed: seed + 10, file: 1 },
];

let dir: string;
let cachePath: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memlayer-plans-'));
  cachePath = join(dir, 'weights.xpwc');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('method plans', () => {
  test('a cold start writes the plan; the next start uses it and reads no weight table', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    const reference = heapOnlyOutput(program);
    const cold = start(program, cachePath);
    expect(cold).toMatchObject({ output: reference, fromPlan: false, cacheHits: 0 });
    expect(existsSync(methodPlansPath(cachePath))).toBe(true);
    const warm = start(program, cachePath);
    expect(warm).toMatchObject({ output: reference, fromPlan: true, cacheHits: 2 });
    expect(warm.stats).toMatchObject({
      filesStatted: 2,
      filesKnown: 0,
      headersParsed: 0,
      filesOpened: 0,
      tensorsHashed: 0,
    });
  });

  test('an edited manifest is planned anew; the old plan is not used', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    start(program, cachePath);
    // Same graph, other bytes (a trailing newline): the digest differs, so no trust.
    writeFileSync(program, `${readFileSync(program, 'utf8')}\n`);
    const edited = start(program, cachePath);
    expect(edited).toMatchObject({ output: heapOnlyOutput(program), fromPlan: false });
    expect(start(program, cachePath)).toMatchObject({ fromPlan: true, cacheHits: 2 });
  });

  test('a settled manifest is known by its identity: the plan is used without its digest', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    backdate(program);
    start(program, cachePath);
    // A digest no manifest has: only the manifest's identity can make the plan fit.
    rewritePlan(cachePath, (plan) => ({ ...plan, manifestDigest: '0'.repeat(64) }));
    expect(start(program, cachePath)).toMatchObject({
      output: heapOnlyOutput(program),
      fromPlan: true,
      cacheHits: 2,
    });
  });

  test('a manifest modified within the racy window is known by its bytes only', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    start(program, cachePath); // the manifest was written just now
    rewritePlan(cachePath, (plan) => ({ ...plan, manifestDigest: '0'.repeat(64) }));
    expect(start(program, cachePath)).toMatchObject({
      output: heapOnlyOutput(program),
      fromPlan: false,
    });
  });

  test('a manifest touched but not changed keeps its plan (its bytes have the digest)', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    backdate(program);
    start(program, cachePath);
    backdate(program); // another mtime and ctime: another identity, the same bytes
    expect(start(program, cachePath)).toMatchObject({ fromPlan: true, cacheHits: 2 });
  });

  test('a weight file rewritten with other values: the plan is not used, outputs follow the file', () => {
    const programDir = join(dir, 'a');
    const program = writeLinearProgram(programDir, layers(1));
    start(program, cachePath);
    const other = writeLinearProgram(join(dir, 'other'), [
      layers(1)[0] as LayerSpec,
      { ...(layers(1)[1] as LayerSpec), seed: 777 },
    ]);
    const target = join(programDir, 'weights-1.safetensors');
    writeFileSync(target, readFileSync(join(dir, 'other', 'weights-1.safetensors')));
    const past = new Date(Date.now() - 30_000);
    utimesSync(target, past, past);
    const changed = start(program, cachePath);
    expect(changed).toMatchObject({ output: heapOnlyOutput(other), fromPlan: false, cacheHits: 1 });
  });

  test('weights modified within the racy window are not planned', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    const now = new Date();
    utimesSync(join(dir, 'a', 'weights-0.safetensors'), now, now);
    start(program, cachePath);
    expect(existsSync(methodPlansPath(cachePath))).toBe(false);
  });

  test('a cache that lost its entries: the plan still serves keys, misses read checked data', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    start(program, cachePath);
    rmSync(cachePath);
    const repacked = start(program, cachePath);
    expect(repacked).toMatchObject({
      output: heapOnlyOutput(program),
      fromPlan: true,
      cacheHits: 0,
    });
    // The misses resolved the weights (tables and digests from the record) to check them.
    expect(repacked.stats).toMatchObject({ filesKnown: 2, tensorsHashed: 0 });
    expect(start(program, cachePath)).toMatchObject({ fromPlan: true, cacheHits: 2 });
  });

  test('progress events count the same operators and bytes with and without the plan', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    const events: OperatorProgress[][] = [[], []];
    start(program, cachePath, (event) => events[0]?.push(event));
    expect(start(program, cachePath, (event) => events[1]?.push(event)).fromPlan).toBe(true);
    const totals = (list: OperatorProgress[] | undefined) =>
      list?.map(({ operators, totalOperators, weightBytes, totalWeightBytes }) => [
        operators,
        totalOperators,
        weightBytes,
        totalWeightBytes,
      ]);
    expect(totals(events[1])).toEqual(totals(events[0]));
    expect(totals(events[0])).toEqual([
      [1, 2, 24 * 16 * 4, (24 * 16 + 8 * 24) * 4],
      [2, 2, (24 * 16 + 8 * 24) * 4, (24 * 16 + 8 * 24) * 4],
    ]);
    expect(events[1]?.map((event) => event.cacheHit)).toEqual([true, true]);
  });

  test('plans of two programs live side by side in one file', () => {
    const a = writeLinearProgram(join(dir, 'a'), layers(1));
    const b = writeLinearProgram(join(dir, 'b'), layers(500));
    start(a, cachePath);
    start(b, cachePath);
    expect(start(a, cachePath)).toMatchObject({ output: heapOnlyOutput(a), fromPlan: true });
    expect(start(b, cachePath)).toMatchObject({ output: heapOnlyOutput(b), fromPlan: true });
  });
});

describe('the plan and the record are saved once the method is runnable', () => {
  function loadOnly(program: string): void {
    processMemo.clear();
    forgetSourceRecords();
    const module = new Module(program, { registry: createDefaultRegistry() });
    module.load(
      new LoadBackendOptionsMap().setOptions(
        'XnnpackBackend',
        new BackendOptions().setOption('packed_cache_path', cachePath),
      ),
    );
    module.loadMethod('forward');
    module.dispose();
  }

  test('not on the load path; a later start of this process reads them all the same', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    loadOnly(program);
    expect(existsSync(methodPlansPath(cachePath))).toBe(false);
    expect(existsSync(sourceRecordPath(cachePath))).toBe(false);
    // Reading a file with a save pending runs the save first: the plan is used.
    expect(start(program, cachePath)).toMatchObject({ fromPlan: true, cacheHits: 2 });
  });

  test('on a later turn of the event loop', async () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    loadOnly(program);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(existsSync(methodPlansPath(cachePath))).toBe(true);
    expect(existsSync(sourceRecordPath(cachePath))).toBe(true);
  });

  test('at the latest when the process exits', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    const child = spawnSync(
      process.execPath,
      ['--conditions=memlayer-source', '--import', 'tsx', LOAD_AND_EXIT, program, cachePath],
      { encoding: 'utf8', cwd: join(import.meta.dirname, '..'), timeout: 110_000 },
    );
    expect(child.status, child.stderr).toBe(0);
    expect(existsSync(sourceRecordPath(cachePath))).toBe(true);
    expect(start(program, cachePath)).toMatchObject({ fromPlan: true, cacheHits: 2 });
  });
});

describe('a plans file that cannot be trusted is ignored with a warning', () => {
  test('truncated: ignored, then written again', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    start(program, cachePath);
    const path = methodPlansPath(cachePath);
    writeFileSync(path, readFileSync(path, 'utf8').slice(0, 100));
    const torn = start(program, cachePath);
    expect(torn).toMatchObject({ output: heapOnlyOutput(program), fromPlan: false });
    expect(torn.warnings.join('\n')).toContain(path);
    expect(start(program, cachePath)).toMatchObject({ fromPlan: true, warnings: [] });
  });

  test('an older version of the file: no plan, no warning, replaced by the next save', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    const path = methodPlansPath(cachePath);
    writeFileSync(path, `{"format":"memlayer-method-plans","version":1,"check":""}\n{"plans":[]}`);
    const first = start(program, cachePath);
    expect(first).toMatchObject({ output: heapOnlyOutput(program), fromPlan: false, warnings: [] });
    expect(start(program, cachePath)).toMatchObject({ fromPlan: true, warnings: [] });
  });

  test('one key digit rotted: its check digest differs, the plan is not used', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    start(program, cachePath);
    const path = methodPlansPath(cachePath);
    const text = readFileSync(path, 'utf8');
    // The last line holds the plan's entry names (hex digits joined by ',').
    const at = text.lastIndexOf('\n', text.length - 2) + 1;
    expect(text.slice(at, at + 64)).toMatch(/^[0-9a-f]{64}$/);
    const digit = text[at] === '0' ? '1' : '0';
    writeFileSync(path, `${text.slice(0, at)}${digit}${text.slice(at + 1)}`);
    const rotted = start(program, cachePath);
    expect(rotted).toMatchObject({ output: heapOnlyOutput(program), fromPlan: false });
    expect(rotted.warnings.join('\n')).toContain('check digest');
  });

  test('a plan whose keys line is missing (check digest made to agree): not used', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    start(program, cachePath);
    const path = methodPlansPath(cachePath);
    const text = readFileSync(path, 'latin1');
    const headEnd = text.indexOf('\n') + 1;
    // Header, plans line, keys line: drop the keys line and make the check agree again.
    const body = text.slice(headEnd, text.lastIndexOf('\n', text.length - 2) + 1);
    const check = crc32cOf(Buffer.from(body, 'latin1')).toString(16).padStart(8, '0');
    const head = text.slice(0, headEnd).replace(/"check":"[0-9a-f]{8}"/, `"check":"${check}"`);
    writeFileSync(path, head + body, 'latin1');
    const cut = start(program, cachePath);
    expect(cut).toMatchObject({ output: heapOnlyOutput(program), fromPlan: false, cacheHits: 2 });
    expect(cut.warnings.join('\n')).toContain('a plan without its keys line');
  });

  test('keys swapped between layers (check digest made to agree): the data check catches it', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    start(program, cachePath);
    rewriteEntryNames(cachePath, ([layer0, layer1]) => [layer1, layer0]);
    const swapped = start(program, cachePath);
    // Each layer misses (the entries under the swapped keys have other layouts), its data
    // read for packing does not have the planned key: the start begins again without it.
    expect(swapped).toMatchObject({
      output: heapOnlyOutput(program),
      fromPlan: false,
      cacheHits: 2,
    });
    expect(swapped.warnings.join('\n')).toContain('is not what the method plan says');
  });

  test('an entry name that does not fit its node (bias cut off): the plan is not used', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    start(program, cachePath);
    // Layer 0 has a bias: its entry name must hold a kernel key and a bias key after it.
    rewriteEntryNames(cachePath, ([layer0, layer1]) => [layer0.slice(0, 64), layer1]);
    expect(start(program, cachePath)).toMatchObject({
      output: heapOnlyOutput(program),
      fromPlan: false,
      cacheHits: 2,
    });
    // The start without it planned anew: the next one uses the plan.
    expect(start(program, cachePath)).toMatchObject({ fromPlan: true, cacheHits: 2 });
  });

  test('a FIFO, a directory or an oversized file in its place: no hang, no read', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(1));
    const reference = heapOnlyOutput(program);
    const path = methodPlansPath(cachePath);
    execFileSync('mkfifo', [path]);
    start(program, cachePath);
    // The FIFO was replaced by the plan (rename over it), never opened for a blocking read.
    expect(start(program, cachePath)).toMatchObject({ output: reference, fromPlan: true });
    rmSync(path);
    mkdirSync(path);
    const besideDirectory = start(program, cachePath);
    expect(besideDirectory).toMatchObject({ output: reference, fromPlan: false });
    expect(besideDirectory.warnings.length).toBeGreaterThan(0);
    rmSync(path, { recursive: true });
    writeFileSync(path, '');
    truncateSync(path, MAX_METHOD_PLANS_BYTES + 1);
    const oversized = start(program, cachePath);
    expect(oversized).toMatchObject({ output: reference, fromPlan: false });
    expect(oversized.warnings.join('\n')).toContain(path);
  });
});

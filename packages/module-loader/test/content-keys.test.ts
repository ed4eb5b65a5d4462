import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  BackendOptions,
  createDefaultRegistry,
  LoadBackendOptionsMap,
  Module,
  methodPlansPath,
  savePendingMemoFiles,
  sourceRecordPath,
  type WeightStats,
  type XnnpackHandle,
} from '../src/index.js';
import { decodePlans } from '../src/plans/plan-codec.js';
import {
  heapOnlyOutput,
  type LayerSpec,
  programInput,
  sha256,
  writeLinearProgram,
} from './weights-programs.js';

const CHILD = join(import.meta.dirname, 'fixtures', 'run-cached.ts');

interface ChildReport {
  output: string;
  packs: number;
  cacheHits: number;
  fromPlan: boolean;
  entries: number;
  names: string[];
  afterLoad: WeightStats;
  stats: WeightStats;
  ascendCreated: boolean;
}

function runChild(programPath: string, cachePath: string): ChildReport {
  const result = spawnSync(
    process.execPath,
    ['--conditions=memlayer-source', '--import', 'tsx', CHILD, programPath, cachePath],
    { encoding: 'utf8', cwd: join(import.meta.dirname, '..'), timeout: 110_000 },
  );
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as ChildReport;
}

/** runChild, without waiting: several children at once. */
function runChildConcurrently(programPath: string, cachePath: string): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--conditions=memlayer-source', '--import', 'tsx', CHILD, programPath, cachePath],
      { encoding: 'utf8', cwd: join(import.meta.dirname, '..'), timeout: 110_000 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

const layers = (seed: number, names = ['w0', 'b0', 'w1', 'b1']): LayerSpec[] => [
  { weight: names[0] as string, bias: names[1] as string, out: 24, in: 16, seed },
  {
    weight: names[2] as string,
    bias: names[3] as string,
    out: 8,
    in: 24,
    seed: seed + 10,
    file: 1,
  },
];

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memlayer-content-'));
});
afterEach(() => {
  savePendingMemoFiles(); // saves left for later by this test's loads, before the folder goes
  rmSync(dir, { recursive: true, force: true });
});

describe('content-keyed weights through one cache file (fresh processes)', () => {
  test.each([
    ['a first', [1, 2]],
    ['b first', [2, 1]],
  ] as const)('same names, other values: each program gets its own outputs (%s)', (_, order) => {
    const programs = {
      1: writeLinearProgram(join(dir, 'a'), layers(1)),
      2: writeLinearProgram(join(dir, 'b'), layers(500)),
    };
    const reference = { 1: heapOnlyOutput(programs[1]), 2: heapOnlyOutput(programs[2]) };
    expect(reference[1]).not.toBe(reference[2]);
    const cachePath = join(dir, 'weights.xpwc');
    for (const which of [...order, ...order]) {
      const report = runChild(programs[which], cachePath);
      expect(report.output).toBe(reference[which]);
    }
    // Both programs' entries live side by side in the one file.
    expect(runChild(programs[order[0]], cachePath)).toMatchObject({
      packs: 0,
      cacheHits: 2,
      entries: 4,
    });
  });

  test('same bytes under other names: one entry, a hit, nothing packed', () => {
    const first = writeLinearProgram(join(dir, 'a'), layers(1));
    const renamed = writeLinearProgram(join(dir, 'b'), layers(1, ['k', 'kb', 'q', 'qb']));
    const cachePath = join(dir, 'weights.xpwc');
    const cold = runChild(first, cachePath);
    expect(cold).toMatchObject({ packs: 2, cacheHits: 0, entries: 2 });
    const other = runChild(renamed, cachePath);
    expect(other).toMatchObject({ packs: 0, cacheHits: 2, entries: 2 });
    expect(other.names).toEqual(cold.names);
    expect(other.output).toBe(cold.output);
  });

  test('same bytes, transposed shape ([96, 32] vs [32, 96]: one name, one seed): a miss, right outputs', () => {
    const wide = writeLinearProgram(join(dir, 'a'), [{ weight: 'w', out: 96, in: 32, seed: 4 }]);
    const tall = writeLinearProgram(join(dir, 'b'), [{ weight: 'w', out: 32, in: 96, seed: 4 }]);
    const cachePath = join(dir, 'weights.xpwc');
    const first = runChild(wide, cachePath);
    const second = runChild(tall, cachePath);
    // Same stored bytes, so the same entry name; only the packing layout tells them apart.
    expect(second.names).toEqual(first.names);
    expect(first.output).toBe(heapOnlyOutput(wide));
    expect(second.output).toBe(heapOnlyOutput(tall));
    expect(second).toMatchObject({ packs: 1, cacheHits: 0 });
    expect(runChild(wide, cachePath).output).toBe(first.output);
  });

  test('same names, XOR-colliding shapes ([96, 32] and [112, 48]): a miss, right outputs', () => {
    const a = writeLinearProgram(join(dir, 'a'), [
      { weight: 'w', bias: 'b', out: 96, in: 32, seed: 4 },
    ]);
    const b = writeLinearProgram(join(dir, 'b'), [
      { weight: 'w', bias: 'b', out: 112, in: 48, seed: 4 },
    ]);
    const cachePath = join(dir, 'weights.xpwc');
    expect(runChild(a, cachePath).output).toBe(heapOnlyOutput(a));
    expect(runChild(b, cachePath)).toMatchObject({ output: heapOnlyOutput(b), packs: 1 });
  });

  test('a warm start with unchanged files stats them and hashes, parses and opens nothing', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(3));
    const cachePath = join(dir, 'weights.xpwc');
    const cold = runChild(program, cachePath);
    expect(cold.stats).toMatchObject({
      filesStatted: 2,
      filesHashed: 2,
      tensorsHashed: 4,
      headersParsed: 2,
    });
    expect(cold.stats.bytesHashed).toBe((24 * 16 + 24 + 8 * 24 + 8) * 4);
    // Program load alone never opens a weight file, cold or warm.
    expect(cold.afterLoad).toMatchObject({ filesStatted: 2, filesOpened: 0, headersParsed: 0 });
    expect(statSync(sourceRecordPath(cachePath)).isFile()).toBe(true);
    // The method's plan: not even the record's tables are read.
    const warm = runChild(program, cachePath);
    expect(warm).toMatchObject({
      packs: 0,
      cacheHits: 2,
      output: cold.output,
      ascendCreated: false,
      fromPlan: true,
    });
    const nothingRead = {
      filesStatted: 2,
      headersParsed: 0,
      filesHashed: 0,
      bytesHashed: 0,
      filesOpened: 0,
      windowsMapped: 0,
    };
    expect(warm.stats).toMatchObject({ ...nothingRead, filesKnown: 0 });
    // Without the plan, the record: tables recalled, nothing hashed, parsed or opened.
    rmSync(methodPlansPath(cachePath));
    const recalled = runChild(program, cachePath);
    expect(recalled).toMatchObject({ packs: 0, output: cold.output, fromPlan: false });
    expect(recalled.stats).toMatchObject({ ...nothingRead, filesKnown: 2 });
  });

  test('a weight file rewritten with the same size is re-hashed alone; outputs follow it', () => {
    const programDir = join(dir, 'a');
    const program = writeLinearProgram(programDir, layers(3));
    const cachePath = join(dir, 'weights.xpwc');
    runChild(program, cachePath);
    const secondFile = join(programDir, 'weights-1.safetensors');
    const before = readFileSync(secondFile);
    // Same names, shapes and size, other values: only weights-1 changes.
    const other = writeLinearProgram(join(dir, 'other'), [
      layers(3)[0] as LayerSpec,
      { ...(layers(3)[1] as LayerSpec), seed: 777 },
    ]);
    const replacement = readFileSync(join(dir, 'other', 'weights-1.safetensors'));
    expect(replacement.byteLength).toBe(before.byteLength);
    expect(replacement.equals(before)).toBe(false);
    writeFileSync(secondFile, replacement);
    const report = runChild(program, cachePath);
    expect(report.output).toBe(heapOnlyOutput(program));
    expect(report.output).toBe(heapOnlyOutput(other));
    expect(report.stats).toMatchObject({
      filesKnown: 1,
      filesHashed: 1,
      tensorsHashed: 2,
      headersParsed: 1,
    });
    expect(report.stats.bytesHashed).toBe((8 * 24 + 8) * 4);
    expect(report).toMatchObject({ cacheHits: 1, packs: 1 });
  });

  test('four processes starting four programs at once on one cache: a whole plans file, right outputs', async () => {
    const programs = [1, 100, 200, 300].map((seed, i) =>
      writeLinearProgram(join(dir, `p${i}`), layers(seed)),
    );
    const references = programs.map(heapOnlyOutput);
    const cachePath = join(dir, 'weights.xpwc');
    for (let round = 0; round < 2; round++) {
      const reports = await Promise.all(
        programs.map((program) => runChildConcurrently(program, cachePath)),
      );
      expect(reports.map((report) => report.output)).toEqual(references);
    }
    // Writers replace the file whole (temp + rename): it always parses. Plans written at the
    // same moment may replace each other (the last rename wins); a start without its plan
    // writes it again.
    const plans = decodePlans(readFileSync(methodPlansPath(cachePath)));
    expect(plans.length).toBeGreaterThan(0);
    for (const [i, program] of programs.entries()) {
      const report = runChild(program, cachePath);
      expect(report).toMatchObject({ output: references[i], packs: 0, cacheHits: 2 });
    }
    const last = programs.map((program) => runChild(program, cachePath));
    expect(last.map((report) => report.fromPlan)).toEqual([true, true, true, true]);
    expect(last.map((report) => report.output)).toEqual(references);
  });

  test('a corrupt record next to the cache is ignored with a warning; outputs stay right', () => {
    const program = writeLinearProgram(join(dir, 'a'), layers(3));
    const cachePath = join(dir, 'weights.xpwc');
    const cold = runChild(program, cachePath);
    // Without a plan, so that the record is read.
    rmSync(methodPlansPath(cachePath));
    writeFileSync(
      sourceRecordPath(cachePath),
      '{"format":"memlayer-weight-sources","version":1,"files":[{"path":',
    );
    const result = spawnSync(
      process.execPath,
      ['--conditions=memlayer-source', '--import', 'tsx', CHILD, program, cachePath],
      { encoding: 'utf8', cwd: join(import.meta.dirname, '..'), timeout: 110_000 },
    );
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toContain('MEMLAYER_SOURCE_RECORD');
    const report = JSON.parse(result.stdout) as ChildReport;
    expect(report).toMatchObject({ output: cold.output, packs: 0, cacheHits: 2 });
    expect(report.stats.filesHashed).toBe(2);
  });
});

describe('content-keyed weights through one in-process registry', () => {
  for (const cacheFile of [false, true]) {
    test(`same names, other values, both orders (${cacheFile ? 'cache file' : 'heap cache'})`, () => {
      const programs = [
        writeLinearProgram(join(dir, 'a'), layers(1)),
        writeLinearProgram(join(dir, 'b'), layers(500)),
      ];
      const references = programs.map(heapOnlyOutput);
      const registry = createDefaultRegistry();
      const options = new LoadBackendOptionsMap().setOptions(
        'XnnpackBackend',
        new BackendOptions().setOption('packed_cache_path', cacheFile ? join(dir, 'c.xpwc') : ''),
      );
      const live: Module[] = [];
      for (const index of [0, 1, 1, 0]) {
        const module = new Module(programs[index] as string, { registry });
        module.load(options);
        const [output] = module.execute('forward', [programInput(module.programManifest())]);
        expect(sha256(output?.data as Float32Array)).toBe(references[index]);
        live.push(module);
      }
      const handle = live[0]?.methodHandle('forward') as XnnpackHandle;
      expect(handle.cache.stats().entries).toBe(4);
      // Each method's handle reports its program's weight cost; the memo served the repeats.
      expect(
        ((live[2] as Module).methodHandle('forward') as XnnpackHandle).weightStats,
      ).toMatchObject({
        filesStatted: 2,
        bytesHashed: 0,
        headersParsed: 0,
      });
      for (const module of live) module.dispose();
    });
  }
});

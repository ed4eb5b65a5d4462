import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { demoVerdict, renderDemoTable } from '../src/commands/demo.js';
import { writeDemoModel } from '../src/demo/model.js';
import { memlayer, tempDir, v3File } from './helpers.js';

let dir: string;
let cleanup: () => void;
let programPath: string;

beforeAll(() => {
  ({ dir, cleanup } = tempDir());
  programPath = writeDemoModel(dir, 4, 64).programPath;
});
afterAll(() => cleanup());

describe('memlayer run', () => {
  test("--cache '' runs heap-only and writes nothing next to the working folder", async () => {
    const cwd = join(dir, 'heap-cwd');
    mkdirSync(cwd);
    const run = await memlayer(['run', programPath, '--cache', '', '--json'], { io: { cwd } });
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.cachePath).toBe('');
    expect(report.cache.fileBytes).toBe(0);
    expect(readdirSync(dir).filter((name) => name.startsWith('heap-cwd'))).toEqual(['heap-cwd']);
    expect(readdirSync(cwd)).toEqual([]);
  });

  test('cold run packs and writes the cache; a second process packs nothing, same outputs', async () => {
    const cache = join(dir, 'run.xpwc');
    const cold = await memlayer(['run', programPath, '--cache', cache, '--batch', '3', '--json']);
    expect(cold.status, cold.stderr).toBe(0);
    const coldReport = JSON.parse(cold.stdout);
    expect(coldReport).toMatchObject({
      method: 'forward',
      backend: 'XnnpackBackend',
      packs: 4,
      cacheHits: 0,
      operators: 4,
    });
    expect(coldReport.outputs[0].shape).toEqual([3, 64]);
    const warm = JSON.parse(
      (await memlayer(['run', programPath, '--cache', cache, '--batch', '3', '--json'])).stdout,
    );
    expect(warm).toMatchObject({ packs: 0, cacheHits: 4 });
    // Every start reads and hashes the weights it keys, the warm one too.
    expect(warm.weights).toMatchObject({
      filesStatted: 1,
      bytesHashed: coldReport.weights.bytesHashed,
    });
    expect(warm.weights.bytesHashed).toBeGreaterThan(64 * 64 * 4);
    expect(warm.cache.fallback).toEqual({});
    expect(warm.outputs).toEqual(coldReport.outputs);
    expect(warm.cache.fileBytes).toBe(coldReport.cache.fileBytes);
    // inspect tells what each entry was packed from: the SHA-256 of weight and bias bytes.
    const inspect = JSON.parse((await memlayer(['inspect', cache, '--json'])).stdout);
    expect(inspect.entries).toHaveLength(4);
    for (const entry of inspect.entries) {
      expect(entry.digests.weight).toMatch(/^[0-9a-f]{64}$/);
      expect(entry.digests.bias).toMatch(/^[0-9a-f]{64}$/);
      expect(entry.layout).toMatchObject({ outputChannels: 64, inputChannels: 64 });
    }
    const text = (await memlayer(['inspect', cache])).stdout;
    expect(text).toContain(`sha256 ${inspect.entries[0].digests.weight.slice(0, 12)}+`);
  });

  test('--cpu-features tiles each layer as XNNPACK would there; --cache-format 2 writes v2', async () => {
    const cache = join(dir, 'fma3-v2.bin');
    const args = ['run', programPath, '--cache', cache, '--cache-format', '2', '--json'];
    const run = await memlayer([...args, '--cpu-features', 'x64:sse2,avx,fma3']);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).cpu).toEqual({ features: 'x64:sse2,avx,fma3', source: 'given' });
    const inspect = JSON.parse((await memlayer(['inspect', cache, '--json'])).stdout);
    expect(inspect.version).toBe(2);
    // 64 outputs on FMA3: XNNPACK's default config, nr16.
    expect(inspect.xnnpackRevisions[0]).toMatchObject({
      revision: '92a7ad50',
      tiling: 'nr16kr1sr1',
    });
    // Another CPU's tiling misses every entry of the file and packs again.
    const other = JSON.parse((await memlayer([...args, '--cpu-features', 'none'])).stdout);
    expect(other).toMatchObject({ packs: 4, cacheHits: 0 });
    const bad = await memlayer([...args, '--cpu-features', 'x64:avx9']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--cpu-features');
    expect((await memlayer([...args, '--cache-format', '4'])).status).toBe(2);
  });

  test('--max-mib: a file over its budget keeps new entries on the heap and evicts at unload', async () => {
    for (const name of ['budget-a', 'budget-b']) mkdirSync(join(dir, name));
    const large = writeDemoModel(join(dir, 'budget-a'), 8, 256).programPath;
    const other = writeDemoModel(join(dir, 'budget-b'), 8, 248).programPath;
    const cache = join(dir, 'budget.xpwc');
    const first = JSON.parse((await memlayer(['run', large, '--cache', cache, '--json'])).stdout);
    expect(first.cache).toMatchObject({ maxFileBytes: null, evicted: { entries: 0, bytes: 0 } });
    expect(first.cache.fileBytes).toBeGreaterThan(2 * 1024 * 1024);
    const run = await memlayer(['run', other, '--cache', cache, '--max-mib', '1', '--json']);
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    // Nothing of the second model fits: it stays on the heap, counted; the first model's
    // entries, unused by this run, are evicted until the file fits.
    expect(report.cache.maxFileBytes).toBe(1024 * 1024);
    expect(report.cache.fallback['over-budget'].count).toBe(8);
    expect(report.cache.evicted.entries).toBeGreaterThan(4);
    const stats = JSON.parse((await memlayer(['stats', cache, '--max-mib', '1', '--json'])).stdout);
    expect(stats.maxFileBytes).toBe(1024 * 1024);
    expect(stats.budgetShare).toBeLessThanOrEqual(1);
    expect(stats.entries).toBe(8 - report.cache.evicted.entries);
    const table = (await memlayer(['run', other, '--cache', cache, '--max-mib', '1'])).stdout;
    expect(table).toContain('file budget (used / budget)');
    expect((await memlayer(['run', other, '--max-mib', 'lots'])).status).toBe(2);
    expect((await memlayer(['stats', cache, '--max-mib', '0'])).status).toBe(2);
  });

  test('the table output names the figures', async () => {
    const result = await memlayer(['run', programPath]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('heap-only cache');
    expect(result.stdout).toMatch(/packing calls\s+4/);
  });

  test('an --input file is used as given', async () => {
    const input = join(dir, 'input.json');
    writeFileSync(input, JSON.stringify(new Array(64).fill(0.5)));
    const a = JSON.parse((await memlayer(['run', programPath, '--input', input, '--json'])).stdout);
    const b = JSON.parse((await memlayer(['run', programPath, '--json'])).stdout);
    expect(a.outputs[0].shape).toEqual([1, 64]);
    expect(a.outputs[0].crc32c).not.toBe(b.outputs[0].crc32c);
  });

  test('a broken manifest is exit 2 naming the file and field', async () => {
    const broken = join(dir, 'broken.json');
    const manifest = JSON.parse(readFileSync(programPath, 'utf8'));
    manifest.methods.forward.graph[0].weight = 'missing.weight';
    writeFileSync(broken, JSON.stringify(manifest));
    const result = await memlayer(['run', broken, '--method', 'forward']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('broken.json');
    expect(result.stderr).toContain('graph[0].weight');
  });
});

describe('memlayer compact', () => {
  test('drops orphans, keeps live entries, and the result verifies', async () => {
    const path = join(dir, 'orphans.xpwc');
    writeFileSync(path, v3File().bytes);
    const result = await memlayer(['compact', path, '--json']);
    expect(result.status, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.entries).toBe(2);
    expect(summary.bytesAfter).toBeLessThan(summary.bytesBefore);
    const report = JSON.parse((await memlayer(['inspect', path, '--json'])).stdout);
    expect(report.orphanBytes).toBe(0);
    expect(report.liveBytes).toBe(5300);
    expect((await memlayer(['verify', path, '--full'])).status).toBe(0);
  });

  test('--out leaves the original untouched', async () => {
    const path = join(dir, 'original.xpwc');
    const out = join(dir, 'compacted.xpwc');
    writeFileSync(path, v3File().bytes);
    expect((await memlayer(['compact', path, '--out', out])).status).toBe(0);
    expect(readFileSync(path)).toEqual(Buffer.from(v3File().bytes));
    expect(readFileSync(out).length).toBeLessThan(readFileSync(path).length);
  });

  test('a file that is not a cache is refused with exit 2', async () => {
    const path = join(dir, 'not-a-cache.bin');
    writeFileSync(path, 'hello world, this is not a cache file at all');
    const result = await memlayer(['compact', path]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('not-a-cache.bin');
  });
});

describe('memlayer demo', () => {
  test('--quick runs the whole story and its figures hold', async () => {
    const result = await memlayer(['demo', '--quick', '--json']);
    expect(result.status, result.stderr).toBe(0);
    const figures = JSON.parse(result.stdout);
    expect(figures.cold.packs).toBeGreaterThan(0);
    expect(figures.warm.packs).toBe(0);
    expect(figures.warm.cacheHits).toBe(figures.cold.packs);
    expect(figures.outputsIdentical).toBe(true);
    expect(figures.reload).toMatchObject({ packs: 0, stable: true });
    expect(figures.ascend.afterBytes).toBe(figures.ascend.baselineBytes);
    expect(figures.ascend.bytesUploadedPerRegistration).toBe(figures.ascend.callableBytes);
    expect(figures.ascend.distinct.refcountedAfter).toBe(0);
    // The report people read: aligned when wide, "key: value" blocks within 80 columns,
    // ending with the verdict.
    const wide = renderDemoTable(figures, 200);
    expect(wide).toMatch(/^ +cold start \(packs\) +warm start \(maps\) +heap-only start$/m);
    expect(wide).toMatch(
      /^verdict: warm start [\d.]+x (faster|slower) than the cold start that packed/m,
    );
    const at80 = renderDemoTable(figures, 80);
    expect(at80).toMatch(/^ +cold start \(packs\) +warm start \(maps\) +heap-only start$/m);
    for (const line of at80.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    const narrow = renderDemoTable(figures, 50);
    expect(narrow).toContain('layers packed\n  cold start (packs): ');
    for (const line of narrow.split('\n')) expect(line.length).toBeLessThanOrEqual(50);
  });
});

describe('the demo verdict', () => {
  const figures = (warmMs: number, heapMs: number) => ({
    model: { layers: 8, features: 512, weightBytes: 8 << 20 },
    cold: { initMs: 60, packs: 8, cacheHits: 0, dirtyBytes: 0, cleanBytes: 8 << 20 },
    warm: { initMs: warmMs, packs: 0, cacheHits: 8, dirtyBytes: 1 << 20, cleanBytes: 8 << 20 },
    heap: { initMs: heapMs, packs: 8, heapBytes: 8 << 20 },
    warmOverCold: warmMs / 60,
    outputsIdentical: true,
    memoryMeasured: true,
    cacheFile: { bytesAfterCold: 9 << 20, liveBytes: 8 << 20, orphanBytes: 0, version: 3 },
    reload: { cycles: 10, packs: 0, minBytes: 9 << 20, maxBytes: 9 << 20, stable: true },
    ascend: {} as never,
  });

  test('names the speed-up and the memory four processes would share', () => {
    expect(demoVerdict(figures(20, 40))).toEqual([
      'verdict: warm start 3.0x faster than the cold start that packed; 4 processes would share one copy: 2.7x less memory (12.00 MiB vs 32.00 MiB)',
    ]);
  });

  test('says why when a heap-only start beats the warm start', () => {
    const [, why] = demoVerdict(figures(36, 30));
    expect(why).toContain(
      'at this size (8.00 MiB) mapping the cache file and reading its index cost more than packing',
    );
  });
});

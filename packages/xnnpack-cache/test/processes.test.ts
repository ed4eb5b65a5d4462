import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTrailer, verifyEntryData, type XpwcEntryV3 } from '@memlayer/cache-format';
import { afterAll, describe, expect, it } from 'vitest';
import { packingStats, resetPackingStats, XNNWeightsCache } from '../src/index.js';
import { reportOf, startCacheChild } from './child.js';
import { crashTrial } from './crash-trial.js';
import { BACKENDS, makeTempDir, referenceHashes } from './file-helpers.js';
import type { ChildArgs } from './fixtures/cache-child.js';
import { buildModel, outputHashes, range } from './fixtures/model.js';

const MODEL = { inputChannels: 96, outputChannels: 64 } as const;
/** A lock wait this long is a hang, not a slow machine (vitest's own limit is 120 s). */
const LOCK_WAIT_HANG_GUARD_MS = 100_000;

function hashesByLayer(layers: readonly number[]): Record<string, string> {
  const hashes = referenceHashes({ ...MODEL, layers });
  return Object.fromEntries(layers.map((l, i) => [String(l), hashes[i] as string]));
}

function verifyFileFully(path: string): XpwcEntryV3[] {
  const bytes = new Uint8Array(readFileSync(path));
  const { trailer } = readTrailer(bytes, bytes.byteLength);
  const entries = trailer.entries as XpwcEntryV3[];
  for (const entry of entries) {
    verifyEntryData(entry, bytes.subarray(entry.fileOffset, entry.fileOffset + entry.dataSize));
  }
  return entries;
}

describe.each(BACKENDS)('cache file shared by processes (%s backend)', (backend) => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const child = (args: Omit<ChildArgs, 'inputChannels' | 'outputChannels'>) =>
    startCacheChild({ ...MODEL, ...args, options: { backend, ...args.options } });

  it('a second process loads what the first packed: zero packing, identical outputs', async () => {
    const path = join(dir, 'cold-warm.xpwc');
    const layers = range(0, 8);
    const cold = reportOf(await child({ path, builds: [layers] }).done);
    expect(cold.packCalls).toBe(8);
    expect(cold.hashes).toEqual(hashesByLayer(layers));
    const warm = reportOf(await child({ path, builds: [layers] }).done);
    expect(warm.packCalls).toBe(0);
    expect(warm.loadedEntries).toBe(8);
    expect(warm.hashes).toEqual(cold.hashes);
    expect(warm.fileBytes).toBe(cold.fileBytes);
  });

  it('three processes on one path at once: all finish, none falls back, commits merge', async () => {
    const path = join(dir, 'shared.xpwc');
    const signal = join(dir, 'go');
    // Overlapping layer sets, two builds (two commits) each, started together.
    const sets = [range(0, 8), range(4, 8), range(8, 8)];
    // Each commit waits for the others' (LOCK_EX). On a loaded machine one process may hold
    // the lock for seconds, so the wait is bounded only against a hang: the default 500 ms
    // would make a slow machine look like a busy lock and send a process to the heap.
    const running = sets.map((layers) =>
      child({
        path,
        startSignal: signal,
        builds: [layers.slice(0, 4), layers.slice(4)],
        options: { lockTimeoutMs: LOCK_WAIT_HANG_GUARD_MS },
      }),
    );
    await Promise.all(running.map((r) => r.waitFor('ready')));
    writeFileSync(signal, '');
    const reports = (await Promise.all(running.map((r) => r.done))).map(reportOf);
    reports.forEach((report, i) => {
      expect(report.fallenBack).toBe(false);
      expect(report.heapBytes).toBe(0);
      expect(report.warnings).toEqual([]);
      expect(report.hashes).toEqual(hashesByLayer(sets[i] as number[]));
    });
    // The newest commit covers every process's entries and verifies clean (data CRCs).
    const entries = verifyFileFully(path);
    expect(new Set(entries.map((e) => e.name)).size).toBe(16);
    // And a later process loads all 16 without packing.
    resetPackingStats();
    const cache = new XNNWeightsCache({ path, backend, verify: 'full' });
    const all = range(0, 16);
    const { ops } = buildModel(cache, { ...MODEL, layers: all });
    expect(packingStats().calls).toBe(0);
    expect(outputHashes(ops, MODEL.inputChannels)).toEqual(
      referenceHashes({ ...MODEL, layers: all }),
    );
    cache.close();
  });

  it('survives SIGKILL at random points of packing and saving', async () => {
    const path = join(dir, 'crash.xpwc');
    // Kill points spread over the child's work, from a seed that is logged, so a failing
    // run can be replayed (MEMLAYER_CRASH_SEED=<seed>).
    const seed = Number(process.env['MEMLAYER_CRASH_SEED'] ?? Date.now() % 100_000);
    const delays = killDelays(seed, 4);
    const outcomes: string[] = [];
    for (const [trial, delay] of delays.entries()) {
      const result = await crashTrial(path, trial, delay, backend);
      expect(result.failures, `seed ${seed}, trial ${trial}, kill at ${delay} ms`).toEqual([]);
      outcomes.push(result.outcome);
    }
    console.log(
      `crash trials (${backend}), seed ${seed}: ${delays.map((d, i) => `${d} ms → ${outcomes[i]}`).join(', ')}`,
    );
    // A trial proves something only if the kill landed before the child finished.
    expect(
      outcomes.filter((outcome) => outcome !== 'completed').length,
      `seed ${seed}`,
    ).toBeGreaterThan(0);
  });

  it('falls back to the heap with a warning when growth hits RLIMIT_FSIZE (EFBIG)', async () => {
    const layers = range(0, 8); // 8 x ~25 KiB packs against a 64 KiB limit
    // `ulimit -f` counts 512-byte blocks; SIGXFSZ ignored so the call fails with EFBIG.
    const limited = await startCacheChild(
      { ...MODEL, path: join(dir, 'efbig-limited.xpwc'), builds: [layers], options: { backend } },
      { wrapper: ['trap "" XFSZ; ulimit -f 128; exec "$0" "$@"'] },
    ).done;
    expect(limited.signal).toBeNull();
    expect(limited.code).toBe(0);
    const report = reportOf(limited);
    expect(report.warnings).toContain('MEMLAYER_CACHE_HEAP_FALLBACK');
    expect(report.fallenBack).toBe(true);
    expect(report.heapBytes).toBeGreaterThan(0);
    expect(report.hashes).toEqual(hashesByLayer(layers));
    expect(limited.stderr).toMatch(/EFBIG/);
  });
});

/**
 * `count` kill delays over 2–102 ms after the child is ready (a whole run takes ~70–300 ms
 * here), one in each equal slice so the first kill lands during the first build, placed in
 * its slice by a small seeded generator (xorshift32).
 */
function killDelays(seed: number, count: number): number[] {
  const slice = Math.floor(100 / count);
  let state = seed >>> 0 || 1;
  return Array.from({ length: count }, (_, i) => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return 2 + i * slice + (state % slice);
  });
}

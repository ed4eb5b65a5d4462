import { createHash } from 'node:crypto';
import { statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStorage, type PackedRegion, type StoredEntry } from '../src/index.js';
import { packageDir, startChild, TS_NODE_FLAGS } from './child.js';
import { makeTempDir } from './file-helpers.js';
import type { StorageChildJob } from './fixtures/storage-child.js';

const childScript = join(packageDir, 'test', 'fixtures', 'storage-child.ts');

async function runStorageChild(job: StorageChildJob) {
  const running = startChild(process.execPath, [
    ...TS_NODE_FLAGS,
    childScript,
    JSON.stringify(job),
  ]);
  const result = await running.done;
  const done = result.events.find((e) => e['event'] === 'done');
  if (done === undefined) throw new Error(`child failed (${result.code}): ${result.stderr}`);
  return done as Record<string, unknown>;
}

const LAYOUT = {
  operatorType: 63,
  outputChannels: 48,
  inputChannels: 64,
  nr: 8,
  kr: 1,
  sr: 1,
  extraBytes: 0,
  flags: 0,
};

/** Fills a region with bytes that depend on `seed`, returns the stored entry. */
function entryOf(name: string, region: PackedRegion, seed: number, layout = false): StoredEntry {
  for (let i = 0; i < region.bytes.byteLength; i++) region.bytes[i] = (i * 31 + seed) & 0xff;
  const entry = { name, seed, fingerprint: 7, dataSize: region.bytes.byteLength, region };
  return layout ? { ...entry, layout: LAYOUT } : entry;
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('loading in windows', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('loads a sparse cache larger than 4 GiB mapped in a fresh process: right bytes, 0 heap bytes', async () => {
    const path = join(dir, 'large.xpwc');
    const first = new FileStorage({ path });
    first.open({ hasEntries: false });
    const low = first.reserve(64 << 10, { persistable: true }) as PackedRegion;
    const lowEntry = entryOf('low', low, 1);
    const want = new Map([['low', sha256(low.bytes)]]);
    expect(first.persist([lowEntry])).toEqual(['low']); // a persist alone commits at once
    first.close();

    // Sparse growth: the next entries land past 4 GiB without writing 4 GiB.
    const past4GiB = 4.5 * 2 ** 30;
    truncateSync(path, past4GiB);
    const second = new FileStorage({ path });
    const loaded = second.open({ hasEntries: false });
    expect(loaded.map((e) => e.name)).toEqual(['low']);
    const big = second.reserve(3 << 20, { persistable: true }) as PackedRegion;
    const small = second.reserve(4096 + 100, { persistable: true }) as PackedRegion;
    const entries = [entryOf('big', big, 2, true), entryOf('small', small, 3), ...loaded];
    want.set('big', sha256(big.bytes)).set('small', sha256(small.bytes));
    second.persist(entries);
    second.close();
    expect(statSync(path).size).toBeGreaterThan(past4GiB);

    const report = await runStorageChild({ job: 'load', path });
    const byName = new Map(
      (report['entries'] as { name: string; sha256: string; layout: unknown }[]).map((e) => [
        e.name,
        e,
      ]),
    );
    for (const [name, hash] of want) expect(byName.get(name)?.sha256).toBe(hash);
    // The v3 entry layout is persisted and given back.
    expect(byName.get('big')?.layout).toEqual(LAYOUT);
    expect(byName.get('small')?.layout).toBeNull();
    const stats = report['stats'] as { heapBytes: number; mappedBytes: number };
    expect(stats.heapBytes).toBe(0);
    // Two windows (below and past the 4.5 GiB hole), not one 4.5 GiB buffer.
    expect((report['mappings'] as { mappings: number }).mappings).toBe(2);
    expect(stats.mappedBytes).toBeLessThan(8 << 20);
  });

  it('never lets an entry cross a window; an entry larger than a window starts a large one', () => {
    const path = join(dir, 'windows.xpwc');
    const writer = new FileStorage({ path });
    writer.open({ hasEntries: false });
    const sizes = [40_000, 70_000, 300_000, 10_000, 90_000];
    const entries = sizes.map((size, i) =>
      entryOf(`e${i}`, writer.reserve(size, { persistable: true }) as PackedRegion, i),
    );
    const want = entries.map((e) => sha256(e.region.bytes));
    writer.persist(entries);
    writer.close();

    const reader = new FileStorage({ path, loadWindowBytes: 128 << 10 });
    const loaded = reader.open({ hasEntries: false });
    expect(loaded.map((e) => sha256(e.region.bytes))).toEqual(want);
    const memory = reader.memoryStats();
    // e0+e1 fit one 128 KiB window; e2 (300 KB) is larger than a window, so its window may
    // grow to LARGE_WINDOW_BYTES and takes e3+e4 too (one large mapping, not three).
    expect(memory.mappings).toBe(2);
    for (const entry of loaded) {
      const buffer = entry.region.bytes.buffer;
      expect(entry.region.bytes.byteOffset + entry.dataSize).toBeLessThanOrEqual(buffer.byteLength);
    }
    reader.close();
  });
});

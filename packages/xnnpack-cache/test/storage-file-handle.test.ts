// The cache file is opened once (one descriptor serves maps, I/O, locks and truncation), and
// its orphan bytes are the ones cache-format's file layout model counts.
import { appendFileSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { readFileLayout } from '@memlayer/cache-format';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStorage, type PackedRegion, type StoredEntry } from '../src/index.js';
import { makeTempDir } from './file-helpers.js';

function descriptorsOf(path: string): number {
  const target = realpathSync(path);
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === target) count++;
    } catch {
      // closed between the listing and the readlink
    }
  }
  return count;
}

function filled(name: string, region: PackedRegion, seed: number): StoredEntry {
  region.bytes.fill(seed);
  return { name, seed, fingerprint: 7, dataSize: region.bytes.byteLength, region };
}

function commitOne(path: string, name: string, seed: number): void {
  const storage = new FileStorage({ path });
  const loaded = storage.open({ hasEntries: false });
  const region = storage.reserve(5000, { persistable: true }) as PackedRegion;
  storage.persist([...loaded, filled(name, region, seed)]);
  storage.close();
}

describe('the cache file handle', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('holds one descriptor of the file while open, through loads, growth, commits and a cut', () => {
    const path = join(dir, 'once.xpwc');
    commitOne(path, 'a', 1);
    const storage = new FileStorage({ path });
    expect(storage.open({ hasEntries: false })).toHaveLength(1);
    expect(descriptorsOf(path)).toBe(1);
    const region = storage.reserve(100, { persistable: true }) as PackedRegion;
    expect(descriptorsOf(path)).toBe(1);
    storage.persist([filled('b', region, 2)]);
    expect(descriptorsOf(path)).toBe(1);
    storage.close();
    expect(descriptorsOf(path)).toBe(0);
  });

  it('counts orphan bytes as describeFileLayout does: old trailers and an uncommitted tail', () => {
    const path = join(dir, 'orphans.xpwc');
    commitOne(path, 'a', 1);
    commitOne(path, 'b', 2); // the first trailer is now an orphan
    appendFileSync(path, new Uint8Array(3000).fill(9)); // a save that never committed
    const storage = new FileStorage({ path });
    storage.open({ hasEntries: false });
    const bytes = new Uint8Array(readFileSync(path));
    const { layout } = readFileLayout(bytes, bytes.length);
    expect(layout.bytes['old-trailer'] + layout.bytes['uncommitted-tail']).toBeGreaterThan(3000);
    expect(storage.stats().orphanBytes).toBe(layout.orphanBytes);
    storage.close();
  });
});

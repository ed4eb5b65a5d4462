// Loaded entries are their own file regions: only the storage (and the open) that loaded
// them may release them.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStorage, type PackedRegion, type StoredEntry } from '../src/index.js';
import { makeTempDir } from './file-helpers.js';

function filled(name: string, region: PackedRegion, seed: number): StoredEntry {
  region.bytes.fill(seed);
  return { name, seed, fingerprint: 7, dataSize: region.bytes.byteLength, region };
}

function namesIn(path: string): string[] {
  const storage = new FileStorage({ path });
  const names = storage.open({ hasEntries: false }).map((e) => e.name);
  storage.close();
  return names.sort();
}

describe('loaded regions', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('keep an entry committed when another storage releases its region', () => {
    const path = join(dir, 'owners.xpwc');
    const first = new FileStorage({ path });
    first.open({ hasEntries: false });
    const a = filled('a', first.reserve(100, { persistable: true }) as PackedRegion, 1);
    expect(first.persist([a])).toEqual(['a']);
    first.close();

    const mine = new FileStorage({ path });
    const other = new FileStorage({ path });
    const loaded = mine.open({ hasEntries: false });
    const otherLoaded = other.open({ hasEntries: false });
    expect(loaded.map((e) => e.name)).toEqual(['a']);
    // Wrong calls: each releases a region the other storage loaded.
    other.release((loaded[0] as StoredEntry).region);
    other.close();
    mine.release((otherLoaded[0] as StoredEntry).region);

    const n = filled('n', mine.reserve(100, { persistable: true }) as PackedRegion, 2);
    expect(mine.persist([...loaded, n])).toEqual(['n']);
    mine.close();
    expect(namesIn(path)).toEqual(['a', 'n']);
  });

  it('drop out of the next commit once their own storage released them', () => {
    const path = join(dir, 'released.xpwc');
    const first = new FileStorage({ path });
    first.open({ hasEntries: false });
    const a = filled('a', first.reserve(100, { persistable: true }) as PackedRegion, 1);
    const b = filled('b', first.reserve(100, { persistable: true }) as PackedRegion, 2);
    first.persist([a, b]);
    first.close();

    const storage = new FileStorage({ path });
    const loaded = storage.open({ hasEntries: false });
    const [la, lb] = [...loaded].sort((x, y) => x.name.localeCompare(y.name)) as StoredEntry[];
    storage.release((lb as StoredEntry).region);
    const n = filled('n', storage.reserve(100, { persistable: true }) as PackedRegion, 3);
    // The released region is not the storage's any more: 'b' is not rewritten from it.
    expect(storage.persist([la as StoredEntry, lb as StoredEntry, n])).toEqual(['n']);
    storage.close();
    expect(namesIn(path)).toEqual(['a', 'b', 'n']); // 'b' stays as the older commit has it
  });
});

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  encodeTrailer,
  nameFromBytes,
  nameToBytes,
  readTrailer,
  V2_FOOTER_SIZE,
} from '@memlayer/cache-format';
import { afterAll, describe, expect, it } from 'vitest';
import {
  FileStorage,
  type PackedRegion,
  packingStats,
  resetPackingStats,
  XNNWeightsCache,
} from '../src/index.js';
import { packageDir, startChild, TS_NODE_FLAGS } from './child.js';
import { captureWarnings, makeTempDir, referenceHashes } from './file-helpers.js';
import { buildModel, type ModelSpec, outputHashes, range } from './fixtures/model.js';

const SPEC: ModelSpec = { layers: range(0, 3), inputChannels: 32, outputChannels: 16 };
const MORE: ModelSpec = { ...SPEC, layers: range(0, 5) };
const storageChild = join(packageDir, 'test', 'fixtures', 'storage-child.ts');
/** Longer than any test here; the holder is killed as soon as its test is done. */
const HOLD_UNTIL_KILLED_MS = 300_000;

describe('sharing a cache file with ExecuTorch', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('does not block on a LOCK_SH held for seconds: new entries go to the heap as lock-busy', async () => {
    const path = join(dir, 'locked.xpwc');
    const first = new XNNWeightsCache({ path });
    buildModel(first, SPEC);
    first.close();

    // Held until this test kills it: a fixed hold of a few seconds could end before a
    // loaded machine got through the builds below.
    const holder = startChild(
      process.execPath,
      [
        ...TS_NODE_FLAGS,
        storageChild,
        JSON.stringify({ job: 'hold-shared-lock', path, ms: HOLD_UNTIL_KILLED_MS }),
      ],
      { timeoutMs: HOLD_UNTIL_KILLED_MS },
    );
    try {
      await holder.waitFor('locked');
      const before = new Uint8Array(readFileSync(path));
      const warnings = captureWarnings();
      resetPackingStats();
      const storage = new FileStorage({ path, lockTimeoutMs: 200 });
      const cache = new XNNWeightsCache({ storage });
      const { ops } = buildModel(cache, MORE);
      // Loading needs only a shared lock: the three committed layers are hits.
      expect(packingStats().calls).toBe(2);
      expect(outputHashes(ops, MORE.inputChannels)).toEqual(referenceHashes(MORE));
      const stats = storage.stats();
      expect(stats.fallback?.['lock-busy']?.count).toBe(2);
      expect(stats.fallback?.['lock-busy']?.bytes).toBe(stats.heapBytes);
      expect(storage.info().fallbackReason).toBe('lock-busy');
      cache.close();
      // All this happened while the other process still held its lock.
      expect(holder.events.some((e) => e['event'] === 'done')).toBe(false);
      expect(await warnings.stop()).toContain('MEMLAYER_CACHE_HEAP_FALLBACK');
      expect(new Uint8Array(readFileSync(path))).toEqual(before);
    } finally {
      holder.child.kill('SIGKILL');
      await holder.done;
    }
  });

  it('serves a v2 file with a short index (ExecuTorch accepts it) and never rewrites it', async () => {
    const path = join(dir, 'short-index.bin');
    const first = new XNNWeightsCache({ path, format: 2 });
    buildModel(first, SPEC);
    first.close();
    const bytes = new Uint8Array(readFileSync(path));
    // One entry more in entry_count than the index holds.
    const view = new DataView(bytes.buffer);
    const countAt = bytes.byteLength - V2_FOOTER_SIZE + 8;
    view.setUint32(countAt, view.getUint32(countAt, true) + 1, true);
    writeFileSync(path, bytes);

    const warnings = captureWarnings();
    resetPackingStats();
    const storage = new FileStorage({ path });
    const cache = new XNNWeightsCache({ storage });
    const { ops } = buildModel(cache, MORE);
    expect(packingStats().calls).toBe(2);
    expect(outputHashes(ops, MORE.inputChannels)).toEqual(referenceHashes(MORE));
    expect(storage.stats().fallback?.['foreign-format']?.count).toBe(2);
    cache.close();
    expect(await warnings.stop()).toContain('MEMLAYER_CACHE_LENIENT_READ');
    expect(new Uint8Array(readFileSync(path))).toEqual(bytes);
  });

  it('appends to the 20-byte empty v2 file ExecuTorch writes for an empty cache, as v2', () => {
    const path = join(dir, 'empty-v2.bin');
    // index_start 0, entry_count 0, "XPWC", version 2 (the encoder refuses an empty index).
    const footer = new DataView(new ArrayBuffer(20));
    footer.setUint32(12, 0x58505743, true);
    footer.setUint32(16, 2, true);
    writeFileSync(path, new Uint8Array(footer.buffer));
    resetPackingStats();
    const cache = new XNNWeightsCache({ path });
    buildModel(cache, SPEC);
    expect(cache.stats().heapBytes).toBe(0);
    cache.close();
    const after = new Uint8Array(readFileSync(path));
    const { trailer } = readTrailer(after, after.byteLength); // strict, as ExecuTorch reads
    expect(trailer.version).toBe(2);
    expect(trailer.entries).toHaveLength(3);
  });

  it('keeps names that are not UTF-8 byte for byte, and a v2 file v2, when it appends', () => {
    const path = join(dir, 'byte-names.bin');
    const rawName = Uint8Array.of(0x6b, 0xff, 0xfe, 0x80);
    const data = new Uint8Array(4096).fill(5);
    const trailer = encodeTrailer(
      [{ name: nameFromBytes(rawName), fileOffset: 0, dataSize: 4096, seed: 9 }],
      { version: 2, indexStart: 4096 },
    );
    const file = new Uint8Array(4096 + trailer.byteLength);
    file.set(data, 0);
    file.set(trailer, 4096);
    writeFileSync(path, file);

    const storage = new FileStorage({ path });
    const loaded = storage.open({ hasEntries: false });
    expect(loaded.map((e) => [...nameToBytes(e.name)])).toEqual([[...rawName]]);
    const region = storage.reserve(1000, { persistable: true }) as PackedRegion;
    region.bytes.fill(6);
    storage.persist([...loaded, { name: 'new', seed: 1, fingerprint: 0, dataSize: 1000, region }]);
    storage.close();

    const after = new Uint8Array(readFileSync(path));
    const { trailer: decoded } = readTrailer(after, after.byteLength);
    expect(decoded.version).toBe(2);
    const names = decoded.entries.map((e) => [...nameToBytes(e.name)]);
    expect(names).toContainEqual([...rawName]);
    expect(names).toContainEqual([...new TextEncoder().encode('new')]);
  });
});

import { describe, expect, it } from 'vitest';
import {
  HeapStorage,
  type LookUpKey,
  NOT_FOUND,
  PACKED_ALLOCATION_ALIGNMENT,
  type TensorView,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';
import { FINGERPRINT, insert, key, namedMap, PreloadedStorage, SEED } from './helpers.js';

function started(storage?: HeapStorage): XNNWeightsCache {
  const cache = new XNNWeightsCache(storage === undefined ? {} : { storage });
  cache.initializeForRuntime(namedMap());
  return cache;
}

const code = (c: string) => expect.objectContaining({ code: c });

describe('entry names (kernel name + bias name, as ExecuTorch)', () => {
  it('names an entry kernel name + bias name with no separator', () => {
    const cache = started();
    const w = cache.loadUnpackedData('weight');
    const b = cache.loadUnpackedData('bias');
    insert(cache, key(w, b));
    expect(cache.getPackedDataNames()).toEqual(['weightbias']);
  });

  it('uses the kernel name alone without a bias', () => {
    const cache = started();
    insert(cache, key(cache.loadUnpackedData('weight')));
    expect(cache.getPackedDataNames()).toEqual(['weight']);
  });

  it('uses the kernel name alone when the bias is not registered', () => {
    const cache = started();
    insert(cache, key(cache.loadUnpackedData('weight'), new Float32Array([5, 6])));
    expect(cache.getPackedDataNames()).toEqual(['weight']);
  });

  it('keeps unnamed entries (unregistered kernel) without a name', () => {
    const cache = started();
    const raw = new Float32Array(4);
    expect(cache.lookUp(key(raw))).toBe(NOT_FOUND);
    expect(cache.lastLookUpUnnamed).toBe(true);
    const offset = insert(cache, key(raw), 9);
    expect(offset).toBe(0);
    expect(cache.offsetToAddr(offset)[0]).toBe(9);
    expect(cache.getPackedDataNames()).toEqual([]);
    expect(cache.stats().unnamedEntries).toBe(1);
    // Unnamed entries are never cached by name: a second look-up still misses.
    expect(cache.lookUp(key(raw))).toBe(NOT_FOUND);
    expect(cache.finalizeForRuntime()).toEqual([]);
  });
});

describe('offsets and metadata', () => {
  it('hands out offsets as indices into the list of packed buffers', () => {
    const cache = started();
    expect(insert(cache, key(cache.loadUnpackedData('weight')), 1, 4096)).toBe(0);
    expect(insert(cache, key(cache.loadUnpackedData('weight2')), 2, 64)).toBe(1);
    expect(insert(cache, key(new Float32Array(1)), 3, 64)).toBe(2);
  });

  it('records offset, dataSize, refCount 0, inCurrentRuntime, fromLoad false, seed, fingerprint', () => {
    const cache = started();
    insert(cache, key(cache.loadUnpackedData('weight')), 1, 128);
    expect(cache.getPackedDataMeta('weight')).toEqual({
      offset: 0,
      dataSize: 128,
      refCount: 0,
      inCurrentRuntime: true,
      fromLoad: false,
      seed: SEED,
      fingerprint: FINGERPRINT,
      lastUsed: 1,
    });
  });
});

describe('initializeForRuntime / loadUnpackedData', () => {
  it('clears isFinalized at the start of a runtime build', () => {
    const cache = started();
    cache.finalizeForRuntime();
    expect(cache.isFinalized()).toBe(true);
    cache.initializeForRuntime(namedMap());
    expect(cache.isFinalized()).toBe(false);
  });

  it('rejects an unknown tensor name with ERR_CACHE_INVALID_EXTERNAL_DATA', () => {
    const cache = started();
    expect(() => cache.loadUnpackedData('missing')).toThrowError(
      code('ERR_CACHE_INVALID_EXTERNAL_DATA'),
    );
  });

  it('rejects loading before initializeForRuntime with ERR_CACHE_INVALID_EXTERNAL_DATA', () => {
    expect(() => new XNNWeightsCache().loadUnpackedData('weight')).toThrowError(
      code('ERR_CACHE_INVALID_EXTERNAL_DATA'),
    );
  });
});

describe('lookUp', () => {
  it('misses on an unknown name and counts it', () => {
    const cache = started();
    expect(cache.lookUp(key(cache.loadUnpackedData('weight')))).toBe(NOT_FOUND);
    expect(cache.lastLookUpUnnamed).toBe(false);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 1, seedRejects: 0 });
  });

  it('rejects an entry packed with another seed and counts the reject', () => {
    const cache = started();
    const w = cache.loadUnpackedData('weight');
    insert(cache, key(w, null, 1));
    expect(cache.lookUp(key(w, null, 2))).toBe(NOT_FOUND);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 1, seedRejects: 1 });
  });

  it('rejects an entry packed with another fingerprint', () => {
    const cache = started();
    const w = cache.loadUnpackedData('weight');
    insert(cache, key(w));
    expect(cache.lookUp({ ...key(w), fingerprint: FINGERPRINT + 1 })).toBe(NOT_FOUND);
    expect(cache.stats().seedRejects).toBe(1);
  });

  it('returns the offset on a hit and marks the entry used by the current runtime', () => {
    const cache = started();
    const w = cache.loadUnpackedData('weight');
    insert(cache, key(w));
    cache.finalizeForRuntime();
    cache.initializeForRuntime(namedMap());
    const w2 = cache.loadUnpackedData('weight');
    expect(cache.getPackedDataMeta('weight')?.inCurrentRuntime).toBe(false);
    expect(cache.lookUp(key(w2))).toBe(0);
    expect(cache.getPackedDataMeta('weight')?.inCurrentRuntime).toBe(true);
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 0 });
  });
});

describe('lookUpOrInsert', () => {
  it('returns the stored offset when the first size bytes are equal', () => {
    const cache = started();
    const w = cache.loadUnpackedData('weight');
    const offset = insert(cache, key(w), 5);
    expect(insert(cache, key(w), 5)).toBe(offset);
  });

  it('returns NOT_FOUND when the name hits but the bytes differ (out of date)', () => {
    const cache = started();
    const w = cache.loadUnpackedData('weight');
    insert(cache, key(w), 5);
    expect(insert(cache, key(w), 6)).toBe(NOT_FOUND);
    expect(cache.offsetToAddr(0)[0]).toBe(5);
  });

  it('compares only the first size bytes', () => {
    const cache = started();
    const w = cache.loadUnpackedData('weight');
    insert(cache, key(w), 5, 64);
    const buffer = cache.reserveSpace(64) as Uint8Array;
    buffer.fill(5);
    buffer[40] = 99;
    expect(cache.lookUpOrInsert(key(w), buffer, 32)).toBe(0);
  });

  it('repacks under the same name after a seed change, keeping older references', () => {
    const cache = started();
    const w = cache.loadUnpackedData('weight');
    insert(cache, key(w, null, 1), 1);
    cache.finalizeForRuntime(); // refCount 1 (runtime A)
    cache.initializeForRuntime(namedMap());
    const wB = cache.loadUnpackedData('weight');
    expect(cache.lookUp(key(wB, null, 2))).toBe(NOT_FOUND);
    const offset = insert(cache, key(wB, null, 2), 2);
    expect(offset).toBe(1);
    // Runtime A's pack stays readable at its old offset.
    expect(cache.offsetToAddr(0)[0]).toBe(1);
    cache.finalizeForRuntime();
    expect(cache.getPackedDataMeta('weight')).toMatchObject({ offset: 1, refCount: 2, seed: 2 });
  });

  it('accepts only buffers from reserveSpace for insertion', () => {
    const cache = started();
    const w = cache.loadUnpackedData('weight');
    expect(() => cache.lookUpOrInsert(key(w), new Uint8Array(64), 64)).toThrowError(
      code('ERR_CACHE_INVALID_ARGUMENT'),
    );
  });
});

describe('reserveSpace', () => {
  it('returns exactly n writable bytes, 64-byte aligned and Float32Array-viewable', () => {
    const cache = started();
    for (const n of [1, 60, 64, 100, 4096]) {
      const bytes = cache.reserveSpace(n * 4) as Uint8Array;
      expect(bytes.byteLength).toBe(n * 4);
      expect(bytes.byteOffset % PACKED_ALLOCATION_ALIGNMENT).toBe(0);
      expect(new Float32Array(bytes.buffer, bytes.byteOffset, n).length).toBe(n);
    }
  });

  it('returns null when the storage cannot reserve', () => {
    const cache = started(new HeapStorage({ maxBytes: 128 }));
    expect(cache.reserveSpace(128)).not.toBeNull();
    expect(cache.reserveSpace(1)).toBeNull();
  });

  it('releases reservations never inserted at finalize', () => {
    const cache = started();
    const w = cache.loadUnpackedData('weight');
    insert(cache, key(w), 5);
    const before = cache.stats().heapBytes;
    insert(cache, key(w), 5); // duplicate pack: equal bytes, not inserted
    expect(cache.stats().heapBytes).toBe(before + 64);
    cache.finalizeForRuntime();
    expect(cache.stats().heapBytes).toBe(before);
  });
});

describe('finalizeForRuntime', () => {
  it('takes a reference on entries of the current runtime and returns their names', () => {
    const cache = started();
    insert(cache, key(cache.loadUnpackedData('weight')));
    insert(cache, key(cache.loadUnpackedData('weight2')));
    expect(cache.finalizeForRuntime()).toEqual(['weight', 'weight2']);
    expect(cache.getPackedDataMeta('weight')).toMatchObject({
      refCount: 1,
      inCurrentRuntime: false,
    });
    // Second runtime uses only one of them.
    cache.initializeForRuntime(namedMap());
    expect(cache.lookUp(key(cache.loadUnpackedData('weight2')))).toBe(1);
    expect(cache.finalizeForRuntime()).toEqual(['weight2']);
    expect(cache.getPackedDataMeta('weight')?.refCount).toBe(1);
    expect(cache.getPackedDataMeta('weight2')?.refCount).toBe(2);
  });

  it('releases the unpacked views: they no longer name entries afterwards', () => {
    const released: TensorView[] = [];
    const map = namedMap();
    const cache = new XNNWeightsCache();
    cache.initializeForRuntime({
      get: (name) => map.get(name),
      names: () => map.names(),
      release: (view) => released.push(view),
    });
    const w = cache.loadUnpackedData('weight');
    insert(cache, key(w));
    cache.finalizeForRuntime();
    expect(released).toEqual([w]);
    // The old view is just an unregistered object in the next build.
    cache.initializeForRuntime(map);
    expect(cache.lookUp(key(w))).toBe(NOT_FOUND);
    expect(cache.lastLookUpUnnamed).toBe(true);
  });

  it('syncs storage and persists every named entry (not unnamed ones)', () => {
    const storage = new PreloadedStorage();
    const cache = started(storage);
    insert(cache, key(cache.loadUnpackedData('weight')));
    insert(cache, key(new Float32Array(2)));
    storage.durable = ['weight'];
    cache.finalizeForRuntime();
    expect(storage.syncs).toBe(1);
    expect(storage.persisted).toEqual([['weight']]);
    expect(cache.getPackedDataMeta('weight')?.fromLoad).toBe(true);
  });
});

describe('deletePackedData', () => {
  it('fails with ERR_CACHE_NOT_FINALIZED before finalize and changes nothing', () => {
    const cache = started();
    insert(cache, key(cache.loadUnpackedData('weight')));
    expect(() => cache.deletePackedData(['weight'])).toThrowError(code('ERR_CACHE_NOT_FINALIZED'));
    expect(cache.getPackedDataNames()).toEqual(['weight']);
  });

  it('fails on an unknown name without applying the valid names (all-or-nothing)', () => {
    const cache = started();
    insert(cache, key(cache.loadUnpackedData('weight')));
    cache.finalizeForRuntime();
    expect(() => cache.deletePackedData(['weight', 'nope'])).toThrowError(
      code('ERR_CACHE_UNKNOWN_NAME'),
    );
    expect(cache.getPackedDataMeta('weight')?.refCount).toBe(1);
    expect(cache.offsetToAddr(0).byteLength).toBe(64);
  });

  it('frees a non-loaded entry at refCount 0 and keeps other offsets valid', () => {
    const cache = started();
    insert(cache, key(cache.loadUnpackedData('weight')), 1);
    insert(cache, key(cache.loadUnpackedData('weight2')), 2);
    cache.finalizeForRuntime();
    const heapBefore = cache.stats().heapBytes;
    cache.deletePackedData(['weight']);
    expect(cache.getPackedDataNames()).toEqual(['weight2']);
    expect(() => cache.offsetToAddr(0)).toThrowError(code('ERR_CACHE_INVALID_OFFSET'));
    expect(cache.offsetToAddr(1)[0]).toBe(2);
    expect(cache.stats().heapBytes).toBe(heapBefore - 64);
  });

  it('keeps an entry while another runtime still references it', () => {
    const cache = started();
    insert(cache, key(cache.loadUnpackedData('weight')));
    cache.finalizeForRuntime();
    cache.initializeForRuntime(namedMap());
    cache.lookUp(key(cache.loadUnpackedData('weight')));
    cache.finalizeForRuntime();
    cache.deletePackedData(['weight']);
    expect(cache.getPackedDataMeta('weight')?.refCount).toBe(1);
    cache.deletePackedData(['weight']);
    expect(cache.getPackedDataMeta('weight')).toBeUndefined();
  });

  it('never takes refCount below 0', () => {
    const storage = new PreloadedStorage([
      { name: 'weight', bytes: new Uint8Array(64), seed: SEED, fingerprint: FINGERPRINT },
    ]);
    const cache = started(storage);
    cache.finalizeForRuntime();
    expect(cache.getPackedDataMeta('weight')?.refCount).toBe(0);
    cache.deletePackedData(['weight', 'weight']);
    expect(cache.getPackedDataMeta('weight')?.refCount).toBe(0);
    // One more runtime takes exactly one reference: a wrapped counter would not return to 0.
    cache.initializeForRuntime(namedMap());
    cache.lookUp(key(cache.loadUnpackedData('weight')));
    cache.finalizeForRuntime();
    expect(cache.getPackedDataMeta('weight')?.refCount).toBe(1);
    cache.deletePackedData(['weight']);
    expect(cache.getPackedDataMeta('weight')?.refCount).toBe(0);
  });

  it('keeps fromLoad entries at refCount 0 (they are persistent)', () => {
    const bytes = new Uint8Array(64).fill(42);
    const storage = new PreloadedStorage([
      { name: 'weight', bytes, seed: SEED, fingerprint: FINGERPRINT },
    ]);
    const cache = started(storage);
    expect(cache.getPackedDataMeta('weight')).toMatchObject({ fromLoad: true, refCount: 0 });
    const offset = cache.lookUp(key(cache.loadUnpackedData('weight')));
    expect(offset).toBe(0);
    cache.finalizeForRuntime();
    cache.deletePackedData(['weight']);
    expect(cache.getPackedDataMeta('weight')).toMatchObject({ fromLoad: true, refCount: 0 });
    expect(cache.offsetToAddr(offset)[0]).toBe(42);
    expect(storage.closes).toBe(0);
  });

  it('releases everything, unnamed buffers included, when no entry remains', () => {
    const storage = new PreloadedStorage();
    const cache = started(storage);
    insert(cache, key(cache.loadUnpackedData('weight')));
    insert(cache, key(new Float32Array(1)));
    cache.finalizeForRuntime();
    cache.deletePackedData(['weight']);
    expect(storage.closes).toBe(1);
    expect(cache.stats()).toMatchObject({
      entries: 0,
      unnamedEntries: 0,
      packedBytes: 0,
      heapBytes: 0,
    });
    expect(() => cache.offsetToAddr(1)).toThrowError(code('ERR_CACHE_INVALID_OFFSET'));
    // Offsets start again at 0 for the next runtime.
    cache.initializeForRuntime(namedMap());
    expect(insert(cache, key(cache.loadUnpackedData('weight')))).toBe(0);
  });
});

describe('storage seam', () => {
  it('tells storage on open whether entries are already in memory', () => {
    const storage = new PreloadedStorage([
      { name: 'weight', bytes: new Uint8Array(64), seed: SEED, fingerprint: FINGERPRINT },
    ]);
    const cache = started(storage);
    cache.finalizeForRuntime();
    cache.initializeForRuntime(namedMap());
    expect(storage.opens).toEqual([{ hasEntries: false }, { hasEntries: true }]);
    expect(cache.getPackedDataNames()).toEqual(['weight']);
  });

  it('asks storage for non-persistable space after an unnamed look-up', () => {
    const seen: boolean[] = [];
    class Recording extends HeapStorage {
      override reserve(n: number, options: { persistable: boolean }) {
        seen.push(options.persistable);
        return super.reserve(n, options);
      }
    }
    const cache = started(new Recording());
    const raw = new Float32Array(1);
    cache.lookUp(key(raw));
    cache.reserveSpace(64);
    cache.lookUp(key(cache.loadUnpackedData('weight')));
    cache.reserveSpace(64);
    expect(seen).toEqual([false, true]);
  });
});

describe('misc', () => {
  it('deleteCache is a no-op', () => {
    const cache = started();
    insert(cache, key(cache.loadUnpackedData('weight')));
    cache.deleteCache();
    expect(cache.getPackedDataNames()).toEqual(['weight']);
  });

  it('reports stats with file fields at 0 on the heap', () => {
    const cache = started();
    insert(cache, key(cache.loadUnpackedData('weight')), 1, 100);
    insert(cache, key(tensorView('x', [1], new Float32Array(1))), 1, 10);
    expect(cache.stats()).toEqual({
      hits: 0,
      misses: 0,
      seedRejects: 0,
      layoutRejects: 0,
      ambiguousRejects: 0,
      entries: 1,
      unnamedEntries: 1,
      packedBytes: 110,
      heapBytes: 128 + 64,
      fileBytes: 0,
      orphanBytes: 0,
      mappedBytes: 0,
    });
  });

  it('validates key fields', () => {
    const cache = started();
    const w = cache.loadUnpackedData('weight');
    expect(() => cache.lookUp({ ...key(w), seed: -1 })).toThrowError(
      code('ERR_CACHE_INVALID_ARGUMENT'),
    );
    expect(() => cache.lookUp({ ...key(w), fingerprint: 2 ** 32 })).toThrowError(
      code('ERR_CACHE_INVALID_ARGUMENT'),
    );
    expect(() => cache.lookUp({ ...key(w), packedSize: -1 })).toThrowError(
      code('ERR_CACHE_INVALID_ARGUMENT'),
    );
    const badLayout = { ...key(w), layout: null } as unknown as LookUpKey;
    expect(() => cache.lookUp(badLayout)).toThrowError(code('ERR_CACHE_INVALID_ARGUMENT'));
  });
});

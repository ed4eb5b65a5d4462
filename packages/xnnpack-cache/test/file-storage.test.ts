import { existsSync, readFileSync, statfsSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTrailer, verifyEntryData } from '@memlayer/cache-format';
import { afterAll, describe, expect, it } from 'vitest';
import {
  compact,
  DEFAULT_CACHE_IDENTITY,
  FileStorage,
  type FileStorageOptions,
  PACKAGE_VERSION,
  packingStats,
  resetPackingStats,
  XNNWeightsCache,
  XNNWeightsCacheManager,
} from '../src/index.js';
import {
  BACKENDS,
  captureWarnings,
  compactSizeOf,
  makeTempDir,
  referenceHashes,
} from './file-helpers.js';
import { buildModel, type ModelSpec, outputHashes, range } from './fixtures/model.js';

const TMPFS_MAGIC = 0x01021994;
const SPEC: ModelSpec = { layers: range(0, 6), inputChannels: 64, outputChannels: 48 };
const reference = referenceHashes(SPEC);

describe.each(BACKENDS)('file-backed cache (%s backend of mmap-native)', (backend) => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  let counter = 0;
  const freshPath = () => join(dir, `cache-${counter++}.xpwc`);
  const open = (path: string, options: Omit<FileStorageOptions, 'path'> = {}) => {
    const storage = new FileStorage({ backend, ...options, path });
    return { storage, cache: new XNNWeightsCache({ storage }) };
  };
  /** Builds SPEC (or `spec`) on a new cache over `path`; returns what a user would check. */
  const run = (
    path: string,
    spec: ModelSpec = SPEC,
    options: Omit<FileStorageOptions, 'path'> = {},
  ) => {
    resetPackingStats();
    const { storage, cache } = open(path, options);
    const { ops, names } = buildModel(cache, spec);
    const result = {
      packCalls: packingStats().calls,
      hashes: outputHashes(ops, spec.inputChannels),
      names,
      stats: cache.stats(),
      info: storage.info(),
      cache,
      storage,
    };
    return result;
  };

  it('packs and saves on a cold run, then loads with zero packing and identical outputs', () => {
    const path = freshPath();
    const cold = run(path);
    expect(cold.packCalls).toBe(6);
    expect(cold.hashes).toEqual(reference);
    expect(cold.stats.heapBytes).toBe(0);
    // Finalize started the commit; it completes on the thread pool, and flush() waits for it.
    for (const name of cold.names) expect(cold.cache.getPackedDataMeta(name)?.fromLoad).toBe(true);
    cold.storage.flush();
    expect(cold.storage.info()).toMatchObject({ generation: 1, pendingCommit: false });
    expect(cold.cache.stats().fileBytes).toBe(statSync(path).size);
    cold.cache.close();

    const warm = run(path);
    expect(warm.packCalls).toBe(0);
    expect(warm.hashes).toEqual(reference);
    expect(warm.info.loadedEntries).toBe(6);
    expect(warm.stats.hits).toBe(6);
    // Loaded entries are one read-only map of the data region.
    expect(warm.stats.mappedBytes).toBeGreaterThan(0);
    warm.cache.close();

    // The file verifies clean: every entry's data CRC matches.
    const bytes = new Uint8Array(readFileSync(path));
    const { trailer } = readTrailer(bytes, bytes.byteLength);
    expect(trailer.entries).toHaveLength(6);
    for (const entry of trailer.entries) {
      expect(() =>
        verifyEntryData(
          entry as never,
          bytes.subarray(entry.fileOffset, entry.fileOffset + entry.dataSize),
        ),
      ).not.toThrow();
    }
  });

  it('keeps the file size and mtime through 50 unload/reload cycles', () => {
    const path = freshPath();
    run(path).cache.close();
    const size = statSync(path).size;
    // Back-date the file so that any write would move its mtime.
    utimesSync(path, new Date(1_000_000), new Date(1_000_000));
    const manager = new XNNWeightsCacheManager({ backend });
    resetPackingStats();
    for (let cycle = 0; cycle < 25; cycle++) {
      const handle = manager.acquire(path);
      const { ops, names } = buildModel(handle.cache, SPEC);
      if (cycle === 0) expect(outputHashes(ops, SPEC.inputChannels)).toEqual(reference);
      handle.cache.deletePackedData(names);
      handle.release(); // last holder: the cache closes and unmaps
    }
    // Same instance: delete the runtime's references and build again.
    const { cache } = open(path);
    for (let cycle = 0; cycle < 25; cycle++) {
      const { names } = buildModel(cache, SPEC);
      cache.deletePackedData(names);
      expect(cache.getPackedDataNames()).toHaveLength(6); // fromLoad entries stay
    }
    cache.close();
    expect(packingStats().calls).toBe(0);
    expect(statSync(path).size).toBe(size);
    expect(statSync(path).mtimeMs).toBe(1_000_000);
  });

  it('appends and persists entries packed after a load (upstream sends them to the heap)', () => {
    const path = freshPath();
    run(path, { ...SPEC, layers: range(0, 3) }).cache.close();
    const more = run(path, SPEC);
    expect(more.packCalls).toBe(3);
    expect(more.stats.heapBytes).toBe(0);
    more.cache.close();
    const warm = run(path);
    expect(warm.packCalls).toBe(0);
    expect(warm.hashes).toEqual(reference);
    warm.cache.close();
  });

  it('repacks stale entries after a tiling change, reports orphans, and compact() removes them', () => {
    const path = freshPath();
    run(path).cache.close();
    const retiled = { ...SPEC, tiling: { nr: 4, kr: 2, sr: 2 } };
    const stale = run(path, retiled);
    expect(stale.packCalls).toBe(6);
    expect(stale.stats.seedRejects).toBe(6);
    expect(stale.hashes).toEqual(referenceHashes(retiled));
    stale.storage.flush();
    stale.stats = stale.cache.stats();
    // The six superseded packs and the first trailer are referenced by nothing now.
    expect(stale.stats.orphanBytes).toBeGreaterThanOrEqual(6 * 4096);
    stale.cache.close();

    const before = statSync(path).size;
    const progress: [number, number][] = [];
    const result = compact(path, {
      backend,
      onProgress: (done, total) => progress.push([done, total]),
    });
    expect(result.bytesBefore).toBe(before);
    expect(progress.at(-1)?.[0]).toBe(progress.at(-1)?.[1]);
    expect(result.entries).toBe(6);
    const { expected, actual } = compactSizeOf(path);
    expect(actual).toBe(expected);
    expect(actual).toBeLessThan(before);

    const warm = run(path, retiled);
    expect(warm.packCalls).toBe(0);
    expect(warm.stats.orphanBytes).toBe(0);
    expect(warm.hashes).toEqual(referenceHashes(retiled));
    // Progress counted the live bytes copied: exactly what the warm run loads.
    expect(progress.at(-1)?.[1]).toBe(warm.stats.packedBytes);
    warm.cache.close();
  });

  it('compacts at close when orphans pass autoCompactThreshold', () => {
    const path = freshPath();
    run(path).cache.close();
    const retiled = { ...SPEC, tiling: { nr: 4, kr: 2, sr: 2 } };
    const stale = run(path, retiled, { autoCompactThreshold: 0.3 });
    stale.storage.flush();
    const { orphanBytes, fileBytes } = stale.cache.stats();
    expect(orphanBytes / fileBytes).toBeGreaterThan(0.3);
    stale.cache.close();
    const { expected, actual } = compactSizeOf(path);
    expect(actual).toBe(expected);
    expect(actual).toBeLessThan(fileBytes);
    // Below the threshold nothing happens.
    const kept = run(path, SPEC, { autoCompactThreshold: 0.99 });
    kept.storage.flush();
    const size = kept.cache.stats().fileBytes;
    kept.cache.close();
    expect(statSync(path).size).toBe(size);
  });

  it('keeps serving mappings of the old file after compact() renames a new one over it', () => {
    const path = freshPath();
    run(path).cache.close();
    const holder = run(path); // maps the committed data
    compact(path, { backend });
    expect(outputHashes(buildModel(holder.cache, SPEC).ops, SPEC.inputChannels)).toEqual(reference);
    // New entries of the holder go to the new file and are committed there.
    const extra = { ...SPEC, layers: [99] };
    buildModel(holder.cache, extra);
    holder.cache.close();
    const warm = run(path, { ...SPEC, layers: [...SPEC.layers, 99] });
    expect(warm.packCalls).toBe(0);
    warm.cache.close();
  });

  it('drops and repacks an entry whose data fails its CRC with verify "full"', async () => {
    const path = freshPath();
    run(path).cache.close();
    const bytes = new Uint8Array(readFileSync(path));
    const { trailer } = readTrailer(bytes, bytes.byteLength);
    const victim = trailer.entries[2];
    if (victim === undefined) throw new Error('no entry');
    bytes[victim.fileOffset + 100] = (bytes[victim.fileOffset + 100] ?? 0) ^ 0x40;
    writeFileSync(path, bytes);

    const warnings = captureWarnings();
    const full = run(path, SPEC, { verify: 'full' });
    expect(await warnings.stop()).toContain('MEMLAYER_CACHE_CORRUPT_ENTRY');
    expect(full.packCalls).toBe(1);
    expect(full.info.droppedEntries).toBe(1);
    expect(full.hashes).toEqual(reference);
    full.cache.close();
    // The repack was appended and committed: a full check of the newest index passes.
    const after = new Uint8Array(readFileSync(path));
    const newest = readTrailer(after, after.byteLength).trailer;
    for (const entry of newest.entries) {
      expect(() =>
        verifyEntryData(
          entry as never,
          after.subarray(entry.fileOffset, entry.fileOffset + entry.dataSize),
        ),
      ).not.toThrow();
    }
  });

  it('trusts data with verify "index" (trailer CRC and bounds only)', () => {
    const path = freshPath();
    run(path).cache.close();
    const bytes = new Uint8Array(readFileSync(path));
    const { trailer } = readTrailer(bytes, bytes.byteLength);
    const victim = trailer.entries[0];
    if (victim === undefined) throw new Error('no entry');
    bytes[victim.fileOffset + 8] = (bytes[victim.fileOffset + 8] ?? 0) ^ 0x01;
    writeFileSync(path, bytes);
    const indexOnly = run(path);
    expect(indexOnly.packCalls).toBe(0);
    indexOnly.cache.close();
  });

  it('rejects a file of another identity as a whole and rebuilds it by rename', async () => {
    const path = freshPath();
    run(path, SPEC, { identity: 'packer A 1.0' }).cache.close();
    const holder = run(path, SPEC, { identity: 'packer A 1.0' });
    expect(holder.packCalls).toBe(0);
    const inodeBefore = statSync(path).ino;

    const warnings = captureWarnings();
    const other = run(path, SPEC, { identity: 'packer B 2.0' });
    expect(await warnings.stop()).toContain('MEMLAYER_CACHE_REBUILT');
    expect(other.info.rebuiltBecause).toBe('ERR_XPWC_IDENTITY_MISMATCH');
    expect(other.packCalls).toBe(6);
    expect(other.hashes).toEqual(reference);
    other.cache.close();
    expect(statSync(path).ino).not.toBe(inodeBefore);
    const bytes = new Uint8Array(readFileSync(path));
    const { trailer } = readTrailer(bytes, bytes.byteLength);
    expect(trailer.identity).toBe('packer B 2.0');
    // The process that mapped the old file still reads its bytes (no truncation).
    expect(outputHashes(buildModel(holder.cache, SPEC).ops, SPEC.inputChannels)).toEqual(reference);
    holder.cache.close();
  });

  it('writes ExecuTorch-compatible v2 with format: 2, and keeps a v2 file v2', () => {
    const path = freshPath();
    const cold = run(path, { ...SPEC, layers: range(0, 3) }, { format: 2 });
    expect(cold.packCalls).toBe(3);
    cold.cache.close();
    let bytes = new Uint8Array(readFileSync(path));
    expect(readTrailer(bytes, bytes.byteLength).trailer.version).toBe(2);
    expect(readTrailer(bytes, bytes.byteLength).trailer.entries[0]?.fileOffset).toBe(0);
    // Default options (v3 for new files) keep an existing v2 file readable by ExecuTorch.
    const more = run(path);
    expect(more.packCalls).toBe(3);
    expect(more.hashes).toEqual(reference);
    more.cache.close();
    bytes = new Uint8Array(readFileSync(path));
    const { trailer } = readTrailer(bytes, bytes.byteLength);
    expect(trailer.version).toBe(2);
    expect(trailer.entries).toHaveLength(6);
  });

  // tmpfs pages are always dirty (there is no disk to write them to).
  const onDisk = statfsSync(dir).type !== TMPFS_MAGIC && process.platform === 'linux';
  it.skipIf(!onDisk)('leaves packed pages clean and file-backed after finalize (smaps)', () => {
    const path = freshPath();
    const cold = run(path);
    cold.storage.flush(); // the deferred commit writes the pages back
    const memory = cold.cache.memoryStats();
    if (backend === 'heap') {
      // mmap-native's heap backend copies into ArrayBuffers: no smaps figures.
      expect(memory.available).toBe(false);
    } else {
      expect(memory.available).toBe(true);
      // Regions are carved from one batch of file growth: one mapping, not one per entry.
      expect(memory.mappings).toBe(1);
      expect(memory.dirtyBytes).toBe(0);
      expect(memory.cleanBytes).toBeGreaterThanOrEqual(cold.stats.packedBytes);
    }
    cold.cache.close();
    const heapOnly = new XNNWeightsCache();
    buildModel(heapOnly, SPEC);
    expect(heapOnly.memoryStats()).toMatchObject({ available: false, mappings: 0 });
    expect(heapOnly.memoryStats().heapBytes).toBeGreaterThanOrEqual(cold.stats.packedBytes);
    heapOnly.close();
  });

  it('falls back to the heap with a warning when the file cannot be opened', async () => {
    const path = join(dir, 'no-such-folder', 'cache.xpwc');
    const warnings = captureWarnings();
    const result = run(path);
    expect(await warnings.stop()).toContain('MEMLAYER_CACHE_HEAP_FALLBACK');
    expect(result.info.fallenBack).toBe(true);
    expect(result.hashes).toEqual(reference);
    expect(result.stats.heapBytes).toBeGreaterThan(0);
    expect(existsSync(path)).toBe(false);
    result.cache.close();
  });
});

describe('package version', () => {
  it('matches package.json (it is part of the default cache identity)', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(PACKAGE_VERSION).toBe(manifest.version);
    expect(DEFAULT_CACHE_IDENTITY).toContain(`@memlayer/xnnpack-cache@${manifest.version}`);
  });
});

describe('empty path', () => {
  it('is heap only and touches no file', () => {
    const { dir, cleanup } = makeTempDir();
    try {
      const cache = new XNNWeightsCache({ path: '' });
      const { ops } = buildModel(cache, SPEC);
      expect(outputHashes(ops, SPEC.inputChannels)).toEqual(reference);
      expect(cache.stats().fileBytes).toBe(0);
      expect(cache.stats().heapBytes).toBeGreaterThan(0);
      expect(cache.storage).not.toBeInstanceOf(FileStorage);
      cache.close();
      expect(statSync(dir).nlink).toBe(2); // nothing was created
    } finally {
      cleanup();
    }
  });
});

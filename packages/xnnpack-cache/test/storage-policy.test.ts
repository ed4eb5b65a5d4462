import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  compact,
  FileStorage,
  type FileStorageOptions,
  type PackedRegion,
  XNNWeightsCache,
} from '../src/index.js';
import { packageDir, startChild, TS_NODE_FLAGS } from './child.js';
import { captureWarnings, makeTempDir, referenceHashes } from './file-helpers.js';
import { buildModel, type ModelSpec, outputHashes, range } from './fixtures/model.js';

const SPEC: ModelSpec = { layers: range(0, 3), inputChannels: 32, outputChannels: 16 };
const reference = referenceHashes(SPEC);
const storageChild = join(packageDir, 'test', 'fixtures', 'storage-child.ts');

/** Builds SPEC on a cache over `path`, closes it and returns what a user would check. */
function build(path: string, options: Omit<FileStorageOptions, 'path'> = {}) {
  const storage = new FileStorage({ ...options, path });
  const cache = new XNNWeightsCache({ storage });
  const { ops } = buildModel(cache, SPEC);
  const result = {
    hashes: outputHashes(ops, SPEC.inputChannels),
    stats: cache.stats(),
    storageStats: storage.stats(),
    info: storage.info(),
  };
  cache.close();
  return result;
}

/** A file that starts like a safetensors file: u64 header length, then JSON. */
function safetensorsBytes(): Uint8Array {
  const header = new TextEncoder().encode(
    '{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}',
  );
  const out = new Uint8Array(8 + header.byteLength + 16);
  new DataView(out.buffer).setBigUint64(0, BigInt(header.byteLength), true);
  out.set(header, 8);
  return out;
}

describe('cache path policy', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  let counter = 0;
  const fresh = (name = 'cache') => join(dir, `${name}-${counter++}.xpwc`);

  it('does not follow a symlink at the cache path unless followSymlinks is set', async () => {
    const target = fresh('target');
    writeFileSync(target, '');
    const link = fresh('link');
    symlinkSync(target, link);
    const warnings = captureWarnings();
    const refused = build(link);
    expect(await warnings.stop()).toContain('MEMLAYER_CACHE_HEAP_FALLBACK');
    expect(refused.hashes).toEqual(reference);
    expect(refused.info.fallbackReason).toBe('open-failed');
    expect(refused.storageStats.fallback?.['open-failed']?.count).toBe(3);
    expect(statSync(target).size).toBe(0); // nothing was written through the link

    const followed = build(link, { followSymlinks: true });
    expect(followed.stats.heapBytes).toBe(0);
    expect(statSync(target).size).toBeGreaterThan(0);
  });

  it('never creates the target of a dangling symlink', () => {
    const target = join(dir, 'elsewhere.bin');
    const link = fresh('dangling');
    symlinkSync(target, link);
    const result = build(link);
    expect(result.info.fallbackReason).toBe('open-failed');
    expect(existsSync(target)).toBe(false);
  });

  it('refuses to replace a file that is not a cache (a safetensors file given by mistake)', async () => {
    const path = fresh('model.safetensors');
    const bytes = safetensorsBytes();
    writeFileSync(path, bytes);
    const warnings = captureWarnings();
    const result = build(path);
    expect(await warnings.stop()).toContain('MEMLAYER_CACHE_HEAP_FALLBACK');
    expect(result.hashes).toEqual(reference);
    expect(result.info.fallbackReason).toBe('not-a-cache');
    const counted = result.storageStats.fallback?.['not-a-cache'];
    expect(counted?.count).toBe(3);
    expect(counted?.bytes).toBe(result.stats.heapBytes);
    expect(new Uint8Array(readFileSync(path))).toEqual(bytes);
  });

  it('initialises an empty file and refuses a FIFO without blocking', () => {
    const empty = fresh('empty');
    writeFileSync(empty, '');
    expect(build(empty).stats.heapBytes).toBe(0);
    const fifo = fresh('fifo');
    execFileSync('mkfifo', [fifo]);
    const result = build(fifo);
    expect(result.info.fallbackReason).toBe('open-failed');
    expect(result.hashes).toEqual(reference);
  });

  it('creates files 0600 by default even under umask 0, or with fileMode', () => {
    const previous = process.umask(0);
    try {
      const path = fresh('private');
      build(path);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      const shared = fresh('shared');
      build(shared, { fileMode: 0o640 });
      expect(statSync(shared).mode & 0o777).toBe(0o640);
    } finally {
      process.umask(previous);
    }
  });

  it('keeps the mode across compaction and rebuilds', () => {
    const path = fresh('kept');
    build(path);
    chmodSync(path, 0o640);
    compact(path);
    expect(statSync(path).mode & 0o777).toBe(0o640);
    const inode = statSync(path).ino;
    build(path, { identity: 'another packer' }); // rebuilt by rename
    expect(statSync(path).ino).not.toBe(inode);
    expect(statSync(path).mode & 0o777).toBe(0o640);
  });

  it('removes the temp file of a compaction killed before its rename', async () => {
    const path = fresh('killed');
    build(path);
    const before = new Uint8Array(readFileSync(path));
    const child = startChild(process.execPath, [
      ...TS_NODE_FLAGS,
      storageChild,
      JSON.stringify({ job: 'compact-then-die', path }),
    ]);
    const result = await child.done;
    expect(result.signal).toBe('SIGKILL');
    expect(result.events.some((e) => e['event'] === 'copying')).toBe(true);
    const temps = () => readdirSync(dir).filter((name) => name.endsWith('.tmp'));
    expect(temps()).toHaveLength(1);
    expect(temps()[0]).toContain(`.${child.child.pid}.`);
    expect(new Uint8Array(readFileSync(path))).toEqual(before); // the cache is untouched
    // The next open cleans up what the dead process left.
    expect(build(path).stats.heapBytes).toBe(0);
    expect(temps()).toHaveLength(0);
  });

  it('compacts a v3 file that has no commit yet', () => {
    const path = fresh('uncommitted');
    const storage = new FileStorage({ path });
    storage.open({ hasEntries: false });
    const region = storage.reserve(10_000, { persistable: true }) as PackedRegion;
    region.bytes.fill(7);
    storage.close(); // nothing persisted: the file holds a header and an orphan region
    const result = compact(path);
    expect(result).toMatchObject({ entries: 0, bytesAfter: 4096 });
    expect(statSync(path).size).toBe(4096);
    expect(build(path).stats.heapBytes).toBe(0);
  });
});

// The behavioural suite, run against both backends. Where a check is meaningless for the
// heap backend it is skipped with the reason next to it.
import { closeSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BACKEND_ENV,
  MappedFile,
  type Mapping,
  MmapError,
  mappingMemoryStats,
  openMappedFile,
  pageSize,
  readSmapsTable,
} from '../src/index.js';
import { diskTempDir, makeTempDir, posixExpected, testedBackends } from './helpers.js';

const backends = testedBackends;
const isLinux = process.platform === 'linux';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof MmapError) return error.code;
    throw error;
  }
  return undefined;
}

function dirtyBytes(mapping: Mapping): number {
  const stats = mappingMemoryStats(mapping);
  if (stats === null) throw new Error('no smaps entry for the mapping');
  return stats.privateDirty + stats.sharedDirty;
}

function readRange(path: string, position: number, length: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const out = Buffer.alloc(length);
    readSync(fd, out, 0, length, position);
    return out;
  } finally {
    closeSync(fd);
  }
}

describe.each(backends)('%s backend', (backend) => {
  describe('', () => {
    let dir: string;
    let cleanup: () => void;
    let page: number;
    const open = (name: string, mode: 'r' | 'r+' | 'w+' | 'wx+' = 'w+') =>
      openMappedFile(join(dir, name), { mode, backend });

    beforeEach(() => {
      ({ dir, cleanup } = diskTempDir());
      page = pageSize();
    });
    afterEach(() => cleanup());

    it('writes through a map reach the file after sync()', () => {
      const file = open('data.bin');
      expect(file.backend).toBe(backend);
      file.grow(4 * page);
      const mapping = file.map(0, 4 * page);
      const bytes = mapping.bytes();
      for (let i = 0; i < bytes.length; i++) bytes[i] = i % 251;
      // What sync() changes. posix: the bytes are in the shared page cache at once, so a
      // read of the file cannot tell; the mapping's pages are dirty until msync(MS_SYNC)
      // writes them back and cleans them (smaps Dirty drops to 0; Linux, on a file system
      // with write-back: tmpfs has none, see diskTempDir). heap: the file has none of the
      // bytes until sync() writes the copy back.
      if (backend === 'posix' && isLinux) {
        expect(dirtyBytes(mapping)).toBe(4 * page);
      } else if (backend === 'heap') {
        expect(readFileSync(join(dir, 'data.bin')).every((b) => b === 0)).toBe(true);
      }
      mapping.sync();
      if (backend === 'posix' && isLinux) expect(dirtyBytes(mapping)).toBe(0);
      const onDisk = readFileSync(join(dir, 'data.bin'));
      expect(onDisk.length).toBe(4 * page);
      expect(onDisk.equals(Buffer.from(bytes))).toBe(true);
      mapping.close();
      file.close();
    });

    it('syncs a sub-range with every mode, rounding the start down to a page', () => {
      const file = open('range.bin');
      file.grow(3 * page);
      const mapping = file.map(0, 3 * page);
      const bytes = mapping.bytes();
      bytes.fill(0x11, page + 100, page + 200);
      mapping.sync(page + 100, 100, 'sync');
      expect(readRange(join(dir, 'range.bin'), page + 100, 100).every((b) => b === 0x11)).toBe(
        true,
      );
      bytes.fill(0x22, 10, 20);
      mapping.sync(10, 10, 'async');
      mapping.sync(10, 10, 'invalidate');
      mapping.sync(); // whole mapping, waits for the async write too
      expect(readRange(join(dir, 'range.bin'), 10, 10).every((b) => b === 0x22)).toBe(true);
      mapping.close();
      file.close();
    });

    it('close() detaches the buffer and a second close() is a no-op', () => {
      const file = open('detach.bin');
      file.grow(page);
      const mapping = file.map(0, page);
      const view = mapping.bytes();
      const wide = new Float64Array(mapping.buffer);
      view[0] = 1;
      expect(mapping.buffer.byteLength).toBe(page);
      mapping.close();
      expect(mapping.closed).toBe(true);
      expect(mapping.buffer.byteLength).toBe(0);
      expect(view.length).toBe(0);
      expect(wide.length).toBe(0);
      expect(view[0]).toBeUndefined(); // reads of a detached view see nothing, no crash
      expect(mapping.bytes().length).toBe(0);
      expect(() => mapping.close()).not.toThrow();
      expect(() => mapping.unmap()).not.toThrow();
      expect(codeOf(() => mapping.sync())).toBe('ERR_MMAP_CLOSED');
      expect(codeOf(() => mapping.advise('willneed'))).toBe('ERR_MMAP_CLOSED');
      expect(codeOf(() => mapping.residency())).toBe('ERR_MMAP_CLOSED');
      expect(readFileSync(join(dir, 'detach.bin'))[0]).toBe(1);
      file.close();
      file.close();
      expect(file.closed).toBe(true);
      const error = (() => {
        try {
          file.size();
        } catch (e) {
          return e as MmapError;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(MmapError);
      expect(error?.code).toBe('EBADF');
      expect(error?.syscall).toBe('fstat');
    });

    it('supports `using` disposal', () => {
      let seen: ArrayBuffer | undefined;
      {
        using file = open('dispose.bin');
        file.grow(page);
        using mapping = file.map();
        seen = mapping.buffer;
        expect(seen.byteLength).toBe(page);
      }
      expect(seen.byteLength).toBe(0);
    });

    it('never maps past end-of-file', () => {
      const file = open('eof.bin');
      expect(codeOf(() => file.map())).toBe('ERR_MMAP_PAST_EOF'); // empty file
      file.grow(page + 10);
      expect(codeOf(() => file.map(0, page + 11))).toBe('ERR_MMAP_PAST_EOF');
      expect(codeOf(() => file.map(2 * page, 1))).toBe('ERR_MMAP_PAST_EOF');
      try {
        file.map(page, page);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(MmapError);
        const e = error as MmapError;
        expect(e.code).toBe('ERR_MMAP_PAST_EOF');
        expect(e.syscall).toBe('mmap');
        expect(e.path).toBe(join(dir, 'eof.bin'));
        expect(e.errno).toBeUndefined();
      }
      // Exactly up to end-of-file is fine, including the partial last page.
      const tail = file.map(page, 10);
      expect(tail.length).toBe(10);
      tail.close();
      const whole = file.map();
      expect(whole.length).toBe(page + 10);
      whole.close();
      file.close();
    });

    it('maps a range that does not start on a page boundary', () => {
      const path = join(dir, 'unaligned.bin');
      const content = Buffer.alloc(3 * page);
      for (let i = 0; i < content.length; i++) content[i] = (i * 7) % 256;
      writeFileSync(path, content);
      const file = openMappedFile(path, { mode: 'r+', backend });
      const mapping = file.map(page + 123, 1000);
      expect(Buffer.from(mapping.bytes()).equals(content.subarray(page + 123, page + 1123))).toBe(
        true,
      );
      mapping.bytes()[0] = 0xff;
      mapping.sync(0, 1);
      expect(readRange(path, page + 123, 1)[0]).toBe(0xff);
      expect(readRange(path, page + 122, 1)[0]).toBe(content[page + 122]);
      if (backend === 'posix') {
        expect(mapping.address !== null && mapping.address % BigInt(page)).toBe(0n);
      }
      mapping.close();
      file.close();
    });

    it('grows with real blocks by default and never shrinks', () => {
      const path = join(dir, 'grow.bin');
      const file = open('grow.bin');
      expect(file.grow(64 * page)).toBe(64 * page);
      expect(file.size()).toBe(64 * page);
      // posix_fallocate (or the heap's zero writes) allocated blocks: not a sparse file.
      expect(statSync(path).blocks * 512).toBeGreaterThanOrEqual(64 * page);
      expect(file.grow(page)).toBe(64 * page);
      expect(file.size()).toBe(64 * page);
      expect(file.grow(100n * BigInt(page), { sparse: true })).toBe(100 * page);
      expect(statSync(path).size).toBe(100 * page);
      file.close();
    });

    it('maps and writes a page past 4 GiB of a sparse file', () => {
      const path = join(dir, 'sparse.bin');
      const file = open('sparse.bin');
      const far = 2 ** 32 + 5 * page; // offset beyond 32 bits
      file.grow(far, { sparse: true });
      // Only the tail gets blocks: a few pages, not 4 GiB.
      file.grow(far + 2 * page);
      expect(file.size()).toBe(far + 2 * page);
      expect(statSync(path).blocks * 512).toBeLessThan(64 * page);

      const mapping = file.map(BigInt(far), 2 * page);
      expect(mapping.offset).toBe(far);
      const bytes = mapping.bytes();
      expect(bytes.every((b) => b === 0)).toBe(true);
      bytes.set([1, 2, 3, 4], page - 2);
      mapping.sync();
      expect([...readRange(path, far + page - 2, 4)]).toEqual([1, 2, 3, 4]);
      mapping.close();

      // And read back through a fresh map at an unaligned offset > 2^32.
      const again = file.map(far + page - 2, 4);
      expect([...again.bytes()]).toEqual([1, 2, 3, 4]);
      again.close();
      expect(statSync(path).blocks * 512).toBeLessThan(64 * page);
      file.close();
    });

    it('a write into a read-only map neither crashes nor reaches the file', () => {
      const path = join(dir, 'ro.bin');
      writeFileSync(path, Buffer.alloc(2 * page, 0x5a));
      const file = openMappedFile(path, { mode: 'r', backend });
      const mapping = file.map();
      expect(mapping.writable).toBe(false);
      const bytes = mapping.bytes();
      bytes.fill(0x00, 0, page + 1); // stray writes: a private copy-on-write page
      expect(bytes[0]).toBe(0x00);
      mapping.sync(); // msync of a private mapping writes nothing
      expect(readFileSync(path).every((b) => b === 0x5a)).toBe(true);
      // MADV_DONTNEED drops the private copies: the file's bytes show again.
      mapping.advise('dontneed');
      expect(bytes[0]).toBe(0x5a);
      mapping.close();
      expect(readFileSync(path).every((b) => b === 0x5a)).toBe(true);
      file.close();
    });

    it('a read-only map of a read-write file keeps the file unchanged too', () => {
      const path = join(dir, 'ro2.bin');
      writeFileSync(path, Buffer.alloc(page, 1));
      const file = openMappedFile(path, { mode: 'r+', backend });
      const mapping = file.map(0, page, { writable: false });
      mapping.bytes().fill(9);
      mapping.close();
      expect(readFileSync(path).every((b) => b === 1)).toBe(true);
      file.close();
    });

    it('refuses a writable map of a file opened read-only (EACCES)', () => {
      const path = join(dir, 'ro3.bin');
      writeFileSync(path, Buffer.alloc(page));
      const file = openMappedFile(path, { mode: 'r', backend });
      try {
        file.map(0, page, { writable: true });
        expect.unreachable();
      } catch (error) {
        expect((error as MmapError).code).toBe('EACCES');
        expect((error as MmapError).syscall).toBe('mmap');
      }
      file.close();
    });

    it('reports open errors with code, errno, syscall and path', () => {
      const missing = join(dir, 'missing.bin');
      try {
        openMappedFile(missing, { mode: 'r', backend });
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(MmapError);
        const e = error as MmapError;
        expect(e.code).toBe('ENOENT');
        expect(e.errno).toBe(2);
        expect(e.syscall).toBe('open');
        expect(e.path).toBe(missing);
        expect(e.message).toBe(`ENOENT: no such file or directory, open '${missing}'`);
      }
      open('exists.bin').close();
      expect(codeOf(() => open('exists.bin', 'wx+'))).toBe('EEXIST');
    });

    it("'w+' creates but never truncates", () => {
      const path = join(dir, 'keep.bin');
      writeFileSync(path, 'keep me');
      const file = openMappedFile(path, { mode: 'w+', backend });
      expect(file.size()).toBe(7);
      file.close();
      expect(readFileSync(path, 'utf8')).toBe('keep me');
    });

    it('mappings outlive the file descriptor they came from', () => {
      const path = join(dir, 'outlive.bin');
      const file = open('outlive.bin');
      file.grow(page);
      const mapping = file.map();
      file.close();
      mapping.bytes()[5] = 42;
      mapping.sync(); // still reaches the file
      mapping.close();
      expect(readFileSync(path)[5]).toBe(42);
    });

    it('reports residency for a range, optionally per page', () => {
      const file = open('resident.bin');
      file.grow(8 * page);
      const mapping = file.map(0, 8 * page);
      mapping.bytes().fill(1); // touch every page
      const all = mapping.residency({ pages: true });
      expect(all.total).toBe(8);
      expect(all.resident).toBe(8);
      expect(all.pages).toBeInstanceOf(Uint8Array);
      expect([...(all.pages ?? [])]).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
      // A range from mid-page 1 to mid-page 3 covers pages 1..3.
      const part = mapping.residency({ offset: page + 1, length: 2 * page });
      expect(part.total).toBe(3);
      expect(part.pages).toBeUndefined();
      expect(mapping.residency({ offset: 3, length: 0 }).total).toBe(0);
      mapping.close();
      file.close();
    });

    it('accepts every madvise advice', () => {
      const file = open('advise.bin');
      file.grow(4 * page);
      const mapping = file.map();
      mapping.bytes().fill(3);
      mapping.sync();
      for (const advice of ['normal', 'sequential', 'random', 'willneed', 'dontneed'] as const) {
        mapping.advise(advice);
        mapping.advise(advice, 100, page);
      }
      // dontneed on a shared mapping drops page-table entries, never data.
      expect(mapping.bytes().every((b) => b === 3)).toBe(true);
      mapping.close();
      file.close();
    });

    it('locks: exclusive excludes a second descriptor; non-blocking fails with EAGAIN', () => {
      const a = open('lock.bin');
      const b = open('lock.bin');
      a.lock('exclusive');
      expect(b.tryLock('shared')).toBe(false);
      try {
        b.lock('exclusive', { wait: false });
        expect.unreachable();
      } catch (error) {
        expect((error as MmapError).code).toBe('EAGAIN');
        expect((error as MmapError).syscall).toBe('flock');
      }
      a.unlock();
      expect(b.tryLock('shared')).toBe(true);
      expect(a.tryLock('shared')).toBe(true); // shared locks coexist
      expect(a.tryLock('exclusive')).toBe(false);
      b.close(); // closing drops b's lock
      expect(a.tryLock('exclusive')).toBe(true);
      a.close();
    });

    it('validates arguments with "Expected X for Y but received Z"', () => {
      const file = open('args.bin');
      file.grow(page);
      expect(() => file.map(-1)).toThrow(RangeError);
      expect(() => file.map(-1)).toThrow(/^Expected .* for offset but received number -1$/);
      expect(() => file.map('0' as unknown as number)).toThrow(TypeError);
      expect(() => file.map(0, 0)).toThrow(/for length but received number 0$/);
      expect(() => file.map(1.5)).toThrow(RangeError);
      expect(() => file.grow(-5n)).toThrow(/for newSize but received bigint -5n$/);
      expect(() => file.lock('both' as 'shared')).toThrow(
        "Expected one of 'shared', 'exclusive' for kind but received string 'both'",
      );
      const mapping = file.map();
      expect(() => mapping.sync(0, page, 'later' as 'sync')).toThrow(TypeError);
      expect(() => mapping.advise('forget' as 'normal')).toThrow(/for advice but received/);
      expect(() => mapping.sync(page + 1)).toThrow(RangeError);
      expect(() => mapping.sync(10, page)).toThrow(/for length/);
      expect(() => mapping.residency({ pages: 1 as unknown as boolean })).toThrow(
        /Expected a boolean for pages but received number 1/,
      );
      expect(() => openMappedFile(join(dir, 'x'), { mode: 'rw' as 'r', backend })).toThrow(
        /for options.mode but received string 'rw'/,
      );
      // Stable codes, as Node's own argument errors have.
      const codeOfArgumentError = (fn: () => unknown) => {
        try {
          fn();
        } catch (error) {
          expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
          return (error as { code?: string }).code;
        }
        return undefined;
      };
      expect(codeOfArgumentError(() => file.map(-1))).toBe('ERR_OUT_OF_RANGE');
      expect(codeOfArgumentError(() => file.map('0' as unknown as number))).toBe(
        'ERR_INVALID_ARG_TYPE',
      );
      expect(codeOfArgumentError(() => file.lock('both' as 'shared'))).toBe(
        'ERR_INVALID_ARG_VALUE',
      );
      expect(codeOfArgumentError(() => file.lock(1 as unknown as 'shared'))).toBe(
        'ERR_INVALID_ARG_TYPE',
      );
      expect(codeOfArgumentError(() => openMappedFile('', { backend }))).toBe(
        'ERR_INVALID_ARG_VALUE',
      );
      expect(
        codeOfArgumentError(() => openMappedFile(join(dir, 'x'), { backend, permissions: -1 })),
      ).toBe('ERR_OUT_OF_RANGE');
      expect(codeOfArgumentError(() => mapping.sync(page + 1))).toBe('ERR_OUT_OF_RANGE');
      mapping.close();
      file.close();
    });

    if (backend === 'posix') {
      it('maps MAP_SHARED: two maps of one range see each other at once', () => {
        const file = open('coherent.bin');
        file.grow(page);
        const a = file.map();
        const b = file.map();
        a.bytes()[7] = 99;
        expect(b.bytes()[7]).toBe(99);
        a.close();
        b.close();
        file.close();
      });

      it('a transfer list cannot move the mapped memory away', () => {
        const file = open('transfer.bin');
        file.grow(page);
        const mapping = file.map();
        mapping.bytes()[0] = 5;
        const copy = structuredClone(mapping.buffer, { transfer: [mapping.buffer] });
        expect(mapping.buffer.byteLength).toBe(page); // still ours, still mapped
        expect(new Uint8Array(copy)[0]).toBe(5);
        mapping.bytes()[0] = 6;
        expect(new Uint8Array(copy)[0]).toBe(5); // a copy, not the mapping
        mapping.close();
        expect(mapping.buffer.byteLength).toBe(0);
        file.close();
      });

      it.skipIf(!isLinux)('exposes the address that /proc/self/maps and smaps list', () => {
        const path = join(dir, 'smaps.bin');
        const file = open('smaps.bin');
        file.grow(8 * page);
        const mapping = file.map();
        expect(typeof mapping.address).toBe('bigint');
        const start = (mapping.address ?? 0n).toString(16);
        const line = readFileSync('/proc/self/maps', 'utf8')
          .split('\n')
          .find((l) => l.endsWith(path));
        expect(line?.split('-')[0]?.replace(/^0+/, '')).toBe(start);

        mapping.bytes().fill(1, 0, 4 * page);
        const dirty = mappingMemoryStats(mapping);
        expect(dirty?.size).toBe(8 * page);
        expect((dirty?.privateDirty ?? 0) + (dirty?.sharedDirty ?? 0)).toBe(4 * page);
        mapping.sync(); // writeback cleans the pages
        const clean = mappingMemoryStats(mapping);
        expect((clean?.privateDirty ?? 0) + (clean?.sharedDirty ?? 0)).toBe(0);
        expect((clean?.privateClean ?? 0) + (clean?.sharedClean ?? 0)).toBe(4 * page);
        // One parsed table answers for any mapping, with the same figures.
        const table = readSmapsTable();
        expect(table?.size).toBeGreaterThan(1);
        expect(mappingMemoryStats(mapping, table)).toEqual(clean);
        mapping.close();
        expect(mappingMemoryStats(mapping)).toBeNull();
        file.close();
      });
    } else {
      // Skipped for heap: its mappings are private copies, so two maps of one range are
      // only coherent after sync() + sync(…, 'invalidate').
      it('heap maps are copies made coherent by sync and invalidate', () => {
        const file = open('coherent.bin');
        file.grow(page);
        const a = file.map();
        const b = file.map();
        a.bytes()[7] = 99;
        expect(b.bytes()[7]).toBe(0);
        a.sync();
        b.sync(0, page, 'invalidate');
        expect(b.bytes()[7]).toBe(99);
        a.close();
        b.close();
        file.close();
      });

      // Skipped for heap: there is no kernel mapping, so no address and no smaps entry.
      it('heap mappings have no address and no smaps figures', () => {
        const file = open('smaps.bin');
        file.grow(page);
        const mapping = file.map();
        expect(mapping.address).toBeNull();
        expect(mappingMemoryStats(mapping)).toBeNull();
        mapping.close();
        file.close();
      });
    }
  });
});

describe('backend selection', () => {
  it('honours MEMLAYER_MMAP_BACKEND and lets the option win', () => {
    const { dir, cleanup } = makeTempDir();
    const saved = process.env[BACKEND_ENV];
    try {
      process.env[BACKEND_ENV] = 'heap';
      const viaEnv = openMappedFile(join(dir, 'a'), { mode: 'w+' });
      expect(viaEnv.backend).toBe('heap');
      viaEnv.close();
      if (posixExpected) {
        const viaOption = openMappedFile(join(dir, 'a'), { mode: 'w+', backend: 'posix' });
        expect(viaOption.backend).toBe('posix');
        viaOption.close();
      }
      process.env[BACKEND_ENV] = 'fast';
      expect(() => openMappedFile(join(dir, 'a'), { mode: 'w+' })).toThrow(
        "Expected one of 'auto', 'posix', 'heap' for MEMLAYER_MMAP_BACKEND but received string 'fast'",
      );
      delete process.env[BACKEND_ENV];
      const auto = openMappedFile(join(dir, 'a'), { mode: 'w+' });
      expect(auto.backend).toBe(posixExpected ? 'posix' : 'heap');
      expect(auto).toBeInstanceOf(MappedFile);
      auto.close();
    } finally {
      if (saved === undefined) delete process.env[BACKEND_ENV];
      else process.env[BACKEND_ENV] = saved;
      cleanup();
    }
  });

  it('pageSize() is a power of two', () => {
    const size = pageSize();
    expect(size).toBeGreaterThanOrEqual(4096);
    expect(size & (size - 1)).toBe(0);
  });
});

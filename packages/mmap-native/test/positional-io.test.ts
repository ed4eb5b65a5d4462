// Positional reads and writes on the mapping descriptor (pread/pwrite), fstat, and the
// live mapping count, on both backends.
import { closeSync, openSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BackendName, liveMappingCount, openMappedFile, pageSize } from '../src/index.js';
import { makeTempDir, testedBackends } from './helpers.js';

const GiB = 1024 ** 3;

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
}

function readWithFs(path: string, position: number, length: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const out = Buffer.alloc(length);
    const n = readSync(fd, out, 0, length, position);
    return out.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

describe.each(testedBackends)('positional I/O and stat (%s)', (backend: BackendName) => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = makeTempDir());
  });
  afterEach(() => cleanup());

  it('pwrite/pread round trip past 4 GiB of offset on a sparse file', () => {
    const path = join(dir, 'sparse.bin');
    const file = openMappedFile(path, { mode: 'w+', backend });
    const position = 4 * GiB + 4093; // crosses a page boundary and 2^32
    const pattern = Uint8Array.from({ length: 10_000 }, (_, i) => (i * 7 + 3) % 256);
    file.write(pattern, position);
    expect(file.size()).toBe(position + pattern.length);
    expect(file.read(position, pattern.length)).toEqual(pattern);
    expect(readWithFs(path, position, pattern.length).equals(pattern)).toBe(true);
    // bigint positions are the same offsets
    expect(file.read(BigInt(position) + 7n, 3)).toEqual(pattern.subarray(7, 10));
    // The hole before it reads as zeros.
    expect(file.read(4 * GiB, 16).every((b) => b === 0)).toBe(true);
    // A mapping of the same range sees the written bytes.
    const mapping = file.map(position, pattern.length, { writable: false });
    expect(mapping.bytes()).toEqual(pattern);
    mapping.close();
    file.close();
    expect(statSync(path).blocks * 512).toBeLessThan(GiB); // still sparse
  });

  it('reads are short only at end of file; readInto reports the count', () => {
    const path = join(dir, 'short.bin');
    writeFileSync(path, Uint8Array.from([1, 2, 3, 4, 5]));
    const file = openMappedFile(path, { mode: 'r', backend });
    expect(file.read(2, 10)).toEqual(Uint8Array.from([3, 4, 5]));
    expect(file.read(5, 10).length).toBe(0);
    expect(file.read(1000, 10).length).toBe(0);
    expect(file.read(0, 0).length).toBe(0);
    const target = new Uint8Array(8).fill(9);
    expect(file.readInto(target, 1)).toBe(4);
    expect(target).toEqual(Uint8Array.from([2, 3, 4, 5, 9, 9, 9, 9]));
    expect(file.readInto(target.subarray(6), 0)).toBe(2);
    expect(target.subarray(6)).toEqual(Uint8Array.from([1, 2]));
    file.close();
  });

  it('write needs a writable descriptor; calls on a closed file are EBADF', () => {
    const path = join(dir, 'ro.bin');
    writeFileSync(path, 'abc');
    const file = openMappedFile(path, { mode: 'r', backend });
    expect(codeOf(() => file.write(new Uint8Array(1), 0))).toBe('EBADF');
    file.close();
    expect(codeOf(() => file.read(0, 1))).toBe('EBADF');
    expect(codeOf(() => file.readInto(new Uint8Array(1), 0))).toBe('EBADF');
    expect(codeOf(() => file.stat())).toBe('EBADF');
  });

  it('validates positional arguments with codes', () => {
    const file = openMappedFile(join(dir, 'args.bin'), { mode: 'w+', backend });
    expect(codeOf(() => file.read(-1, 1))).toBe('ERR_OUT_OF_RANGE');
    expect(codeOf(() => file.read(0, -1))).toBe('ERR_OUT_OF_RANGE');
    expect(codeOf(() => file.read('0' as unknown as number, 1))).toBe('ERR_INVALID_ARG_TYPE');
    expect(codeOf(() => file.readInto([0] as unknown as Uint8Array, 0))).toBe(
      'ERR_INVALID_ARG_TYPE',
    );
    expect(codeOf(() => file.write(Buffer.from('x').buffer as unknown as Uint8Array, 0))).toBe(
      'ERR_INVALID_ARG_TYPE',
    );
    expect(() => file.write(new Uint8Array(1), -1)).toThrow(RangeError);
    file.close();
  });

  it('stat() is fstat of the descriptor', () => {
    const path = join(dir, 'stat.bin');
    const file = openMappedFile(path, { mode: 'w+', backend, permissions: 0o640 });
    file.write(new Uint8Array(1234), 0);
    const st = file.stat();
    const expected = statSync(path, { bigint: true });
    expect(st).toEqual({
      dev: Number(expected.dev),
      ino: Number(expected.ino),
      size: 1234,
      mode: Number(expected.mode),
      uid: Number(expected.uid),
      gid: Number(expected.gid),
      mtimeNs: expected.mtimeNs,
    });
    expect(typeof st.mtimeNs).toBe('bigint');
    file.close();
  });

  it('liveMappingCount() follows map and close', () => {
    const file = openMappedFile(join(dir, 'count.bin'), { mode: 'w+', backend });
    file.grow(4 * pageSize());
    const before = liveMappingCount();
    const mappings = [file.map(0, pageSize()), file.map(pageSize(), pageSize())];
    expect(liveMappingCount()).toBe(before + 2);
    mappings[0]?.close();
    mappings[0]?.close(); // idempotent: counted once
    expect(liveMappingCount()).toBe(before + 1);
    expect(codeOf(() => file.map(0, 8 * pageSize()))).toBe('ERR_MMAP_PAST_EOF');
    expect(liveMappingCount()).toBe(before + 1); // a refused map is not counted
    mappings[1]?.close();
    expect(liveMappingCount()).toBe(before);
    file.close();
  });
});

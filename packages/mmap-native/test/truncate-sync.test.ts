// ftruncate (shrinking too) and fdatasync on the thread pool, on both backends.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BackendName, MmapError, openMappedFile, pageSize } from '../src/index.js';
import { errorOf, makeTempDir, testedBackends } from './helpers.js';

const codeOf = (fn: () => unknown) => errorOf(fn)?.code;

describe.each(testedBackends)('truncate and datasyncAsync (%s)', (backend: BackendName) => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = makeTempDir());
  });
  afterEach(() => cleanup());

  it('sets the exact size, shrinking and growing, and keeps the bytes before the cut', () => {
    const path = join(dir, 'cut.bin');
    writeFileSync(
      path,
      Uint8Array.from({ length: 3 * pageSize() }, (_, i) => i & 0xff),
    );
    const file = openMappedFile(path, { mode: 'r+', backend });
    expect(file.truncate(pageSize() + 10)).toBe(pageSize() + 10);
    expect(statSync(path).size).toBe(pageSize() + 10);
    expect(file.size()).toBe(pageSize() + 10);
    expect(Array.from(file.read(pageSize(), 10))).toEqual(
      Array.from({ length: 10 }, (_, i) => (pageSize() + i) & 0xff),
    );
    expect(file.truncate(2 ** 32 + 5)).toBe(2 ** 32 + 5); // grows sparse, past 32 bits
    expect(Array.from(file.read(2 ** 32, 5))).toEqual([0, 0, 0, 0, 0]);
    expect(file.truncate(0)).toBe(0);
    expect(statSync(path).size).toBe(0);
    file.close();
  });

  it('refuses bad sizes, a read-only file and a closed file with typed errors', () => {
    const path = join(dir, 'bad.bin');
    writeFileSync(path, new Uint8Array(100));
    const file = openMappedFile(path, { mode: 'r+', backend });
    expect(codeOf(() => file.truncate(-1))).toBe('ERR_OUT_OF_RANGE');
    expect(codeOf(() => file.truncate(1.5))).toBe('ERR_OUT_OF_RANGE');
    expect(codeOf(() => file.truncate('1' as unknown as number))).toBe('ERR_INVALID_ARG_TYPE');
    file.close();
    expect(codeOf(() => file.truncate(10))).toBe('EBADF');
    const readOnly = openMappedFile(path, { mode: 'r', backend });
    const error = errorOf(() => readOnly.truncate(10));
    expect(error).toBeInstanceOf(MmapError);
    expect(error?.code).toBe('EINVAL');
    expect(statSync(path).size).toBe(100);
    readOnly.close();
  });

  it('syncs data on the thread pool; a close meanwhile does not disturb it', async () => {
    const path = join(dir, 'sync.bin');
    const file = openMappedFile(path, { mode: 'w+', backend });
    file.write(Uint8Array.of(1, 2, 3), 0);
    await expect(file.datasyncAsync()).resolves.toBeUndefined();
    file.write(Uint8Array.of(4), 3);
    const pending = [file.datasyncAsync(), file.datasyncAsync()];
    file.close();
    await expect(Promise.all(pending)).resolves.toEqual([undefined, undefined]);
    expect(Array.from(readFileSync(path))).toEqual([1, 2, 3, 4]);
    const closed = file.datasyncAsync();
    await expect(closed).rejects.toBeInstanceOf(MmapError);
    await expect(closed).rejects.toMatchObject({ code: 'EBADF', syscall: 'fdatasync' });
  });
});

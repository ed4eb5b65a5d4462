// writeInBackground: a pwrite on the thread pool, waited for without the event loop.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BackendName, MmapError, openMappedFile, pageSize } from '../src/index.js';
import {
  errorOf,
  fixture,
  lastJson,
  makeTempDir,
  nodeArgs,
  posixExpected,
  runChild,
  testedBackends,
} from './helpers.js';

const MiB = 1024 * 1024;

function pattern(length: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = (i * 31 + seed) & 0xff;
  return bytes;
}

function same(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

const codeOf = (fn: () => unknown) => errorOf(fn)?.code;

describe.each(testedBackends)('writeInBackground (%s)', (backend: BackendName) => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = makeTempDir());
  });
  afterEach(() => cleanup());

  it('puts every byte in the file; wait() needs no turn of the event loop', () => {
    const path = join(dir, 'data.bin');
    const file = openMappedFile(path, { mode: 'w+', backend });
    file.grow(8 * MiB);
    const first = pattern(3 * MiB + 17, 1);
    const second = pattern(MiB, 2);
    const writes = [
      file.writeInBackground([{ source: first, position: 4096 }]),
      file.writeInBackground([{ source: second, position: 5 * MiB }]),
    ];
    // Synchronously, in the same turn: no callback can have run in between.
    for (const write of writes) {
      write.wait();
      expect(write.done).toBe(true);
    }
    expect(same(file.read(4096, first.length), first)).toBe(true);
    const mapping = file.map(5 * MiB, second.length, { writable: false });
    expect(same(mapping.bytes(), second)).toBe(true);
    mapping.close();
    file.close();
    const onDisk = readFileSync(path);
    expect(onDisk.subarray(4096, 4096 + first.length).equals(first)).toBe(true);
    expect(onDisk.subarray(0, 4096).every((byte) => byte === 0)).toBe(true);
  });

  it('writes parts that follow one another together, past 1024 of them and with empty ones', () => {
    const path = join(dir, 'runs.bin');
    const file = openMappedFile(path, { mode: 'w+', backend });
    // 1,500 adjacent parts of 0 to 299 bytes (one write of at most 1,024 ranges at a time),
    // then a gap, then two more adjacent parts.
    const parts: { source: Uint8Array; position: number }[] = [];
    let position = 100;
    for (let i = 0; i < 1500; i++) {
      const source = pattern((i * 37) % 300, i);
      parts.push({ source, position });
      position += source.byteLength;
    }
    const gapAt = position + 4096;
    parts.push({ source: pattern(5000, 7), position: gapAt });
    parts.push({ source: pattern(3, 8), position: gapAt + 5000 });
    // An empty part alone writes nothing, and is no error.
    parts.push({ source: new Uint8Array(0), position: gapAt + 9000 });
    file.writeInBackground(parts).wait();
    file.close();
    const onDisk = readFileSync(path);
    expect(onDisk.byteLength).toBe(gapAt + 5003);
    for (const part of parts) {
      const written = onDisk.subarray(part.position, part.position + part.source.byteLength);
      expect(same(part.source, written)).toBe(true);
    }
    expect(onDisk.subarray(0, 100).every((byte) => byte === 0)).toBe(true);
    expect(onDisk.subarray(position, gapAt).every((byte) => byte === 0)).toBe(true);
  });

  it('writes a stretch that crosses 512 KiB boundaries in any cut, every byte in place', () => {
    const path = join(dir, 'stretch.bin');
    const file = openMappedFile(path, { mode: 'w+', backend });
    // Adjacent parts of odd sizes from just below the first 512 KiB boundary to past the
    // third: the stretch is written in calls cut on each boundary, some inside a part.
    const KiB = 1024;
    const parts: { source: Uint8Array; position: number }[] = [];
    let position = 512 * KiB - 1000;
    for (const [i, length] of [999, 2, 300 * KiB + 3, 0, 700 * KiB + 11, 1, 524_288].entries()) {
      parts.push({ source: pattern(length, i + 20), position });
      position += length;
    }
    file.writeInBackground(parts).wait();
    file.close();
    const onDisk = readFileSync(path);
    expect(onDisk.byteLength).toBe(position);
    for (const part of parts) {
      const written = onDisk.subarray(part.position, part.position + part.source.byteLength);
      expect(same(part.source, written)).toBe(true);
    }
    expect(onDisk.subarray(0, 512 * KiB - 1000).every((byte) => byte === 0)).toBe(true);
  });

  it('writes many parts in one task, in order (a later part wins where they overlap)', () => {
    const path = join(dir, 'parts.bin');
    const file = openMappedFile(path, { mode: 'w+', backend });
    const parts = [0, 1, 2, 3].map((i) => ({ source: pattern(70_000, i), position: i * 65_536 }));
    const write = file.writeInBackground(parts);
    write.wait();
    file.close();
    const onDisk = readFileSync(path);
    expect(onDisk.byteLength).toBe(3 * 65_536 + 70_000);
    for (const [i, part] of parts.entries()) {
      const end = i === parts.length - 1 ? 70_000 : 65_536;
      expect(
        same(onDisk.subarray(part.position, part.position + end), part.source.subarray(0, end)),
      ).toBe(true);
    }
    // An empty list is a task with nothing to write.
    const empty = openMappedFile(path, { mode: 'r+', backend }).writeInBackground([]);
    empty.wait();
    expect(empty.done).toBe(true);
  });

  it('becomes done by itself, and wait() after that returns at once', async () => {
    const file = openMappedFile(join(dir, 'later.bin'), { mode: 'w+', backend });
    const write = file.writeInBackground([{ source: pattern(64 * 1024, 3), position: pageSize() }]);
    // The pwrite runs on the thread pool, which may wait its turn on a loaded machine: poll
    // until it is done (vitest's limit catches one that never is).
    while (!write.done) {
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(write.done).toBe(true);
    write.wait();
    expect(same(file.read(pageSize(), 64 * 1024), pattern(64 * 1024, 3))).toBe(true);
    file.close();
  });

  it('finishes a write started before close()', () => {
    const path = join(dir, 'closed.bin');
    const file = openMappedFile(path, { mode: 'w+', backend });
    const bytes = pattern(32 * MiB, 4);
    const write = file.writeInBackground([{ source: bytes, position: 0 }]);
    file.close();
    write.wait();
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  it('reports a failed write at wait(), every time', () => {
    const path = join(dir, 'readonly.bin');
    openMappedFile(path, { mode: 'w+', backend }).close();
    const file = openMappedFile(path, { mode: 'r', backend });
    const write = file.writeInBackground([{ source: pattern(100, 5), position: 0 }]);
    for (let i = 0; i < 2; i++) {
      try {
        write.wait();
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(MmapError);
        expect((error as MmapError).code).toBe('EBADF');
        expect((error as MmapError).syscall).toBe('pwrite');
        expect((error as MmapError).path).toBe(path);
      }
    }
    expect(write.done).toBe(true);
    file.close();
  });

  it("commits in one task: syncs before parts and after, then releases the caller's lock", () => {
    const path = join(dir, 'commit.bin');
    const file = openMappedFile(path, { mode: 'w+', backend });
    const other = openMappedFile(path, { mode: 'r+', backend });
    file.write(pattern(MiB, 6), 0);
    file.lock('exclusive');
    const record = pattern(4096, 7);
    const pointer = pattern(64, 8);
    const write = file.writeInBackground(
      [
        { source: record, position: MiB, syncBefore: true },
        { source: pointer, position: 0, syncBefore: true },
      ],
      { syncAfter: true, releaseLock: true },
    );
    write.wait();
    // The task released the lock: another descriptor of the file takes it at once.
    expect(other.tryLock('exclusive')).toBe(true);
    other.unlock();
    const onDisk = readFileSync(path);
    expect(same(onDisk.subarray(MiB, MiB + 4096), record)).toBe(true);
    expect(same(onDisk.subarray(0, 64), pointer)).toBe(true);
    other.close();
    file.close();
  });

  it('starts the write-back when asked (advice: the bytes are the same), and checks the flag', () => {
    const path = join(dir, 'writeback.bin');
    const file = openMappedFile(path, { mode: 'w+', backend });
    const bytes = pattern(2 * MiB + 5, 10);
    file.writeInBackground([{ source: bytes, position: 4096 }], { startWriteback: true }).wait();
    expect(same(file.read(4096, bytes.length), bytes)).toBe(true);
    const flag = { startWriteback: 1 } as never;
    expect(codeOf(() => file.writeInBackground([], flag))).toBe('ERR_INVALID_ARG_TYPE');
    file.close();
  });

  it('releases the lock after a failed commit too, and when the call itself throws', () => {
    const path = join(dir, 'failed-commit.bin');
    openMappedFile(path, { mode: 'w+', backend }).close();
    const reader = openMappedFile(path, { mode: 'r', backend });
    const other = openMappedFile(path, { mode: 'r+', backend });
    reader.lock('exclusive');
    const write = reader.writeInBackground([{ source: pattern(100, 9), position: 0 }], {
      releaseLock: true,
    });
    expect(errorOf(() => write.wait())?.code).toBe('EBADF');
    expect(other.tryLock('exclusive')).toBe(true);
    other.unlock();
    reader.lock('exclusive');
    const bad = [{ source: pattern(4, 1), position: 0, syncBefore: 'yes' }];
    expect(codeOf(() => reader.writeInBackground(bad as never, { releaseLock: true }))).toBe(
      'ERR_INVALID_ARG_TYPE',
    );
    expect(other.tryLock('exclusive')).toBe(true);
    other.close();
    reader.close();
  });

  it('refuses wrong arguments and a closed file at once', () => {
    const file = openMappedFile(join(dir, 'args.bin'), { mode: 'w+', backend });
    const bytes = new Uint8Array(4);
    for (const parts of [bytes, { source: bytes, position: 0 }, [null], [{ position: 0 }]]) {
      expect(codeOf(() => file.writeInBackground(parts as never))).toBe('ERR_INVALID_ARG_TYPE');
    }
    const wide = [{ source: new Uint16Array(4), position: 0 }];
    expect(codeOf(() => file.writeInBackground(wide as never))).toBe('ERR_INVALID_ARG_TYPE');
    const before = [{ source: bytes, position: -1 }];
    expect(codeOf(() => file.writeInBackground(before))).toBe('ERR_OUT_OF_RANGE');
    file.close();
    expect(codeOf(() => file.writeInBackground([{ source: bytes, position: 0 }]))).toBe('EBADF');
  });
});

describe.each(testedBackends)('writeInBackground past RLIMIT_FSIZE (%s)', (backend) => {
  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = makeTempDir());
  });
  afterEach(() => cleanup());

  // 1 MiB limit (`ulimit -f` counts 512-byte blocks); SIGXFSZ ignored, so pwrite on the
  // thread-pool thread fails with EFBIG instead of killing the process.
  it.skipIf(backend === 'posix' && !posixExpected)('wait() throws EFBIG', async () => {
    const path = join(dir, 'limited.bin');
    const result = await runChild('sh', [
      '-c',
      'trap "" XFSZ; ulimit -f 2048; exec "$0" "$@"',
      process.execPath,
      ...nodeArgs(fixture('background-write-limit.ts')),
      path,
      backend,
    ]);
    expect(result.signal).toBeNull();
    expect(result.code).toBe(0);
    const report = lastJson<Record<string, unknown>>(result);
    expect(report).toEqual({
      isMmapError: true,
      code: 'EFBIG',
      // The heap backend writes through node:fs, whose error names write(2).
      syscall: backend === 'posix' ? 'pwrite' : 'write',
      path,
      done: true,
      again: 'EFBIG',
      firstPart: 5,
      sizeAfterFailure: 12_288,
      smallByte: 9,
    });
  });
});

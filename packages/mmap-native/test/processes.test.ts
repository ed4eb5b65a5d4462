// Behaviour that needs a second process: flock between processes, growth beyond a file
// size limit or a full file system, and writes into read-only maps.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type BackendName, MmapError, openMappedFile } from '../src/index.js';
import {
  fixture,
  lastJson,
  makeTempDir,
  nodeArgs,
  posixExpected,
  runChild,
  runNodeFixture,
  startHolder,
} from './helpers.js';

const backends: BackendName[] = ['posix', 'heap'];

// Without the addon the heap backend's locks are process-local (documented), so the
// cross-process checks need it for both backends.
describe.each(backends)('flock across processes (%s)', (backend) => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it.skipIf(!posixExpected)('exclusive vs shared, non-blocking gets EAGAIN', async () => {
    const path = join(dir, `lock-${backend}.bin`);
    const holder = startHolder(path, 'exclusive', backend);
    await holder.locked;
    const file = openMappedFile(path, { mode: 'r+', backend });
    expect(file.tryLock('shared')).toBe(false);
    try {
      file.lock('exclusive', { wait: false });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(MmapError);
      expect((error as MmapError).code).toBe('EAGAIN');
      expect((error as MmapError).errno).toBe(11);
    }
    holder.child.stdin.end('release\n');
    expect(await holder.exited).toBe(0);
    expect(file.tryLock('exclusive')).toBe(true);
    file.close();

    // A shared holder admits shared lockers and refuses exclusive ones.
    const shared = startHolder(path, 'shared', backend);
    await shared.locked;
    const other = openMappedFile(path, { mode: 'r+', backend });
    expect(other.tryLock('exclusive')).toBe(false);
    expect(other.tryLock('shared')).toBe(true);
    other.close();
    shared.child.stdin.end('release\n');
    expect(await shared.exited).toBe(0);
  });

  it.skipIf(!posixExpected)('a blocking lock waits until the other process releases', async () => {
    const path = join(dir, `wait-${backend}.bin`);
    const holder = startHolder(path, 'exclusive', backend, 300);
    await holder.locked;
    const file = openMappedFile(path, { mode: 'r+', backend });
    expect(file.tryLock('exclusive')).toBe(false);
    // The holder releases 300 ms after this line (written before this thread blocks).
    holder.child.stdin.end('release\n');
    file.lock('exclusive'); // blocks this thread until the holder's timer releases it
    expect(await holder.exited).toBe(0);
    file.close();
  });
});

interface GrowReport {
  grew?: boolean;
  isMmapError?: boolean;
  code?: string;
  errno?: number;
  syscall?: string;
  path?: string;
  sizeAfter: number;
}

describe.each(backends)('growth beyond the limits is a clean error (%s)', (backend) => {
  const skip = backend === 'posix' && !posixExpected;
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  // RLIMIT_FSIZE of 1 MiB (`ulimit -f` counts 512-byte blocks). SIGXFSZ is ignored (Node
  // ignores it too), so the system call fails with EFBIG instead of killing the process.
  const limited = (args: string[]) =>
    runChild('sh', [
      '-c',
      'trap "" XFSZ; ulimit -f 2048; exec "$0" "$@"',
      process.execPath,
      ...nodeArgs(fixture('grow-limit.ts')),
      ...args,
    ]);

  it.skipIf(skip)('EFBIG under RLIMIT_FSIZE, allocating or sparse', async () => {
    for (const mode of ['allocate', 'sparse']) {
      const path = join(dir, `efbig-${mode}.bin`);
      const result = await limited([path, backend, String(4 << 20), mode]);
      expect(result.signal).toBeNull();
      expect(result.code).toBe(0);
      const report = lastJson<GrowReport>(result);
      expect(report.isMmapError).toBe(true);
      expect(report.code).toBe('EFBIG');
      expect(report.errno).toBe(27);
      expect(report.path).toBe(path);
      const expectedSyscall =
        mode === 'sparse' ? 'ftruncate' : backend === 'posix' ? 'posix_fallocate' : 'write';
      expect(report.syscall).toBe(expectedSyscall);
      expect(report.sizeAfter).toBe(8192); // the file stays usable below the limit
    }
  });

  // ENOSPC needs a full file system: a 1 MiB tmpfs in a private mount namespace.
  const canMountTmpfs =
    process.platform === 'linux' &&
    spawnSync('unshare', ['-m', 'sh', '-c', 'mount -t tmpfs -o size=1m tmpfs /mnt'], {
      stdio: 'ignore',
    }).status === 0;

  it.skipIf(skip || !canMountTmpfs)('ENOSPC on a full tmpfs', async () => {
    const mountPoint = join(dir, `tmpfs-${backend}`);
    const path = join(mountPoint, 'full.bin');
    const result = await runChild('unshare', [
      '-m',
      'sh',
      '-c',
      `mkdir -p "$1" && mount -t tmpfs -o size=1m tmpfs "$1" && shift && exec "$@"`,
      'sh',
      mountPoint,
      process.execPath,
      ...nodeArgs(fixture('grow-limit.ts')),
      path,
      backend,
      String(8 << 20),
      'allocate',
    ]);
    expect(result.signal).toBeNull();
    expect(result.code).toBe(0);
    const report = lastJson<GrowReport>(result);
    expect(report.isMmapError).toBe(true);
    expect(report.code).toBe('ENOSPC');
    expect(report.errno).toBe(28);
    expect(report.syscall).toBe(backend === 'posix' ? 'posix_fallocate' : 'write');
    expect(report.sizeAfter).toBe(8192);
  });
});

describe.each(backends)('read-only maps in a separate process (%s)', (backend) => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it.skipIf(backend === 'posix' && !posixExpected)(
    'writing into a read-only map does not crash and does not reach the file',
    async () => {
      const path = join(dir, 'ro.bin');
      const original = Buffer.alloc(64 * 1024, 0xa5);
      writeFileSync(path, original);
      const result = await runNodeFixture('readonly-write.ts', [path, backend]);
      expect(result.signal).toBeNull(); // no SIGSEGV / SIGBUS
      expect(result.code).toBe(0);
      expect(lastJson(result)).toEqual({ sawWrite: true });
      expect(readFileSync(path).equals(original)).toBe(true);
    },
  );
});

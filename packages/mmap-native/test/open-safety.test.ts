// Opening is safe on hostile paths: FIFOs and other non-regular files never block and are
// refused, symlinks can be refused, and a NUL byte is an argument error instead of a
// silently shortened path.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAddon } from '../src/backends/posix/addon.js';
import { type BackendName, MmapError, openMappedFile } from '../src/index.js';
import { errorOf, lastJson, makeTempDir, runNodeFixture, testedBackends } from './helpers.js';

describe.each(testedBackends)('open safety (%s)', (backend: BackendName) => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('refuses a FIFO, a directory and a device without blocking, in every mode', async () => {
    const fifo = join(dir, `fifo-${backend}`);
    execFileSync('mkfifo', [fifo]);
    const sub = join(dir, `dir-${backend}`);
    mkdirSync(sub);
    for (const mode of ['r', 'r+', 'w+']) {
      // A blocking open(O_RDONLY) of a FIFO without a writer waits forever: the child's
      // timeout would kill it and the JSON line would be missing.
      const result = await runNodeFixture('open-path.ts', [backend, mode, fifo, sub, '/dev/null'], {
        timeoutMs: 110_000,
      });
      expect(result.signal, result.stderr).toBeNull();
      const [fromFifo, fromDir, fromDevice] = lastJson<{ path: string; code?: string }[]>(result);
      expect(fromFifo?.code).toBe('ERR_MMAP_NOT_REGULAR_FILE');
      // open(O_RDWR) of a directory fails in the kernel already.
      expect(fromDir?.code).toBe(mode === 'r' ? 'ERR_MMAP_NOT_REGULAR_FILE' : 'EISDIR');
      expect(fromDevice?.code).toBe('ERR_MMAP_NOT_REGULAR_FILE');
    }
  });

  it.runIf(process.platform === 'linux')('a refused open leaves no descriptor behind', () => {
    const sub = join(dir, `fd-dir-${backend}`);
    mkdirSync(sub);
    const descriptors = () => readdirSync('/proc/self/fd').length;
    const before = descriptors();
    for (let i = 0; i < 50; i++) {
      for (const path of [sub, '/dev/null']) {
        expect(errorOf(() => openMappedFile(path, { mode: 'r', backend }))?.code).toBe(
          'ERR_MMAP_NOT_REGULAR_FILE',
        );
      }
    }
    expect(descriptors()).toBe(before);
  });

  it('followSymlinks: false refuses a symlink to a file with ELOOP; the default follows it', () => {
    const target = join(dir, `target-${backend}.bin`);
    writeFileSync(target, 'target bytes');
    const link = join(dir, `link-${backend}`);
    symlinkSync(target, link);
    const error = errorOf(() =>
      openMappedFile(link, { mode: 'r', backend, followSymlinks: false }),
    );
    expect(error).toBeInstanceOf(MmapError);
    expect(error?.code).toBe('ELOOP');
    expect((error as MmapError).path).toBe(link);
    const file = openMappedFile(link, { mode: 'r', backend });
    expect(file.size()).toBe('target bytes'.length);
    file.close();
    // Only the last component is checked: a symlinked directory above is followed.
    const linkedDir = join(dir, `linked-dir-${backend}`);
    symlinkSync(dir, linkedDir);
    const throughDir = openMappedFile(join(linkedDir, `target-${backend}.bin`), {
      backend,
      followSymlinks: false,
    });
    expect(throughDir.size()).toBe('target bytes'.length);
    throughDir.close();
  });

  it('followSymlinks: false does not create the target of a dangling symlink', () => {
    const missing = join(dir, `missing-${backend}.bin`);
    const dangling = join(dir, `dangling-${backend}`);
    symlinkSync(missing, dangling);
    for (const mode of ['r', 'r+', 'w+', 'wx+'] as const) {
      const error = errorOf(() =>
        openMappedFile(dangling, { mode, backend, followSymlinks: false }),
      );
      expect(error?.code, mode).toBe(mode === 'wx+' ? 'EEXIST' : 'ELOOP');
    }
    expect(existsSync(missing)).toBe(false);
    // Following it (the default), 'w+' creates the file the link points to, as open(2) does.
    openMappedFile(dangling, { mode: 'w+', backend }).close();
    expect(existsSync(missing)).toBe(true);
  });

  it('a NUL byte in the path is ERR_INVALID_ARG_VALUE, not a shortened path', () => {
    // "..\0/x" used to reach open(2) as "..": the parent directory.
    const file = join(dir, `nul-${backend}.bin`);
    writeFileSync(file, 'x');
    for (const path of [`${dir}/..\0/x`, `${file}\0.other`, '\0']) {
      const error = errorOf(() => openMappedFile(path, { mode: 'r', backend }));
      expect(error).toBeInstanceOf(TypeError);
      expect(error?.code).toBe('ERR_INVALID_ARG_VALUE');
      expect(error?.message).toMatch(/^Expected a path without NUL bytes for path but received/);
    }
    expect(readFileSync(file, 'utf8')).toBe('x');
  });

  if (backend === 'posix') {
    it('the addon itself refuses a NUL byte (defence behind the TypeScript check)', () => {
      const addon = loadAddon();
      const error = errorOf(() => new addon.File(`${dir}\0/x`, 0, 0o666, true));
      expect(error).toBeInstanceOf(TypeError);
      expect(error?.code).toBe('ERR_INVALID_ARG_VALUE');
    });
  }

  it('validates followSymlinks', () => {
    const error = errorOf(() =>
      openMappedFile(join(dir, 'x'), { backend, followSymlinks: 0 as unknown as boolean }),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(error?.code).toBe('ERR_INVALID_ARG_TYPE');
  });
});

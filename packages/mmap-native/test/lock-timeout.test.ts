// lock() with timeoutMs: a bounded wait that ends in ERR_MMAP_LOCK_TIMEOUT, never a hang.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it } from 'vitest';
import { type BackendName, MmapError, openMappedFile } from '../src/index.js';
import {
  errorOf,
  lastJson,
  makeTempDir,
  nodeArgs,
  packageDir,
  runChild,
  startHolder,
  testedBackends,
} from './helpers.js';

// The heap backend uses the addon's flock when it loads (always on Linux here), so a
// lock held by another process excludes both backends.
describe.each(testedBackends)('lock timeout (%s)', (backend: BackendName) => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('a lock held by another process times out within the bound, then is granted', async () => {
    const path = join(dir, `held-${backend}.bin`);
    const holder = startHolder(path, 'exclusive', backend);
    try {
      await holder.locked;
      const file = openMappedFile(path, { mode: 'r+', backend });
      for (const kind of ['shared', 'exclusive'] as const) {
        const started = performance.now();
        const error = errorOf(() => file.lock(kind, { timeoutMs: 300 }));
        const waited = performance.now() - started;
        expect(error).toBeInstanceOf(MmapError);
        expect(error?.code).toBe('ERR_MMAP_LOCK_TIMEOUT');
        expect((error as MmapError).syscall).toBe('flock');
        expect((error as MmapError).path).toBe(path);
        expect(error?.message).toContain('300 ms');
        // It really waited (how long past the bound depends on the machine's load: a hang is
        // vitest's limit to catch).
        expect(waited).toBeGreaterThanOrEqual(290);
      }
      // Released while we wait: granted before the timeout.
      holder.child.stdin.end('release\n');
      file.lock('exclusive', { timeoutMs: 110_000 });
      expect(file.tryLock('exclusive')).toBe(true);
      file.close();
    } finally {
      holder.child.kill();
      await holder.exited;
    }
  });

  it('timeoutMs 0 tries once; wait: false keeps EAGAIN; a free lock needs no wait', () => {
    const path = join(dir, `local-${backend}.bin`);
    const a = openMappedFile(path, { mode: 'w+', backend });
    const b = openMappedFile(path, { mode: 'r+', backend });
    a.lock('exclusive', { timeoutMs: 0 }); // free: granted at once
    expect(errorOf(() => b.lock('shared', { timeoutMs: 0 }))?.code).toBe('ERR_MMAP_LOCK_TIMEOUT');
    expect(errorOf(() => b.lock('shared', { timeoutMs: 20 }))?.code).toBe('ERR_MMAP_LOCK_TIMEOUT');
    expect(errorOf(() => b.lock('shared', { wait: false, timeoutMs: 1000 }))?.code).toBe('EAGAIN');
    a.close();
    b.lock('shared', { timeoutMs: 0 });
    b.close();
  });

  it('validates timeoutMs', () => {
    const file = openMappedFile(join(dir, `args-${backend}.bin`), { mode: 'w+', backend });
    for (const bad of [-1, Number.NaN, Infinity, 2 ** 31]) {
      const error = errorOf(() => file.lock('exclusive', { timeoutMs: bad }));
      expect(error).toBeInstanceOf(RangeError);
      expect(error?.code).toBe('ERR_OUT_OF_RANGE');
    }
    const error = errorOf(() => file.lock('exclusive', { timeoutMs: '5' as unknown as number }));
    expect(error).toBeInstanceOf(TypeError);
    expect(error?.code).toBe('ERR_INVALID_ARG_TYPE');
    file.close();
  });

  it('a free lock reads no clock: perf_hooks stays unloaded', async () => {
    const path = join(dir, `clock-${backend}.bin`);
    const script = [
      `const { openMappedFile } = await import(${JSON.stringify(join(packageDir, 'src', 'index.ts'))});`,
      `const file = openMappedFile(${JSON.stringify(path)}, { mode: 'w+', backend: '${backend}' });`,
      "file.lock('exclusive', { timeoutMs: 500 });",
      'file.close();',
      "console.log(JSON.stringify(process.moduleLoadList.filter((m) => m === 'NativeModule internal/perf/performance')));",
    ].join('\n');
    const result = await runChild(process.execPath, [...nodeArgs('-'), '--input-type=module'], {
      input: script,
    });
    expect(result.stderr).toBe('');
    expect(lastJson(result)).toEqual([]);
  });
});

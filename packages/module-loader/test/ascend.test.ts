import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildChipCallable, DeviceRunner } from '@memlayer/device-runner';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  type AscendSimHandle,
  createDefaultRegistry,
  Module,
  ModuleLoaderError,
} from '../src/index.js';

const hasCc = spawnSync('cc', ['--version'], { stdio: 'ignore' }).status === 0;
if (!hasCc)
  console.warn(
    'skipping AscendSimBackend tests: no system C compiler (cc) to build the orchestration .so',
  );

let dir: string;
let manifestPath: string;

beforeAll(() => {
  if (!hasCc) return;
  dir = mkdtempSync(join(tmpdir(), 'memlayer-ascend-'));
  writeFileSync(
    join(dir, 'orch.c'),
    // The entry, plus the two functions a host orchestration object must export
    // (simpler's host_build_graph looks them up after dlopen).
    [
      'int aicpu_orchestration_entry(void *args) { return args != 0; }',
      'int framework_bind_runtime(void *runtime) { return runtime != 0; }',
      'int framework_prewarm_graph_recorders(void) { return 0; }',
      '',
    ].join('\n'),
  );
  const cc = spawnSync('cc', [
    '-shared',
    '-fPIC',
    '-Wl,--build-id',
    '-o',
    join(dir, 'orch.so'),
    join(dir, 'orch.c'),
  ]);
  expect(cc.status, String(cc.stderr)).toBe(0);
  const kernel = Uint8Array.from({ length: 4096 }, (_, i) => (i * 31) & 0xff);
  const callable = buildChipCallable({
    orch: readFileSync(join(dir, 'orch.so')),
    // Host orchestration resolves only the entry it is told (upstream does not default it).
    funcName: 'aicpu_orchestration_entry',
    children: [
      { funcId: 0, core: { binary: kernel } },
      { funcId: 1, core: { binary: kernel.subarray(0, 1000) } },
    ],
  });
  writeFileSync(join(dir, 'model.chipcallable'), callable);
  manifestPath = join(dir, 'program.json');
  writeFileSync(
    manifestPath,
    JSON.stringify({
      format: 'memlayer-program',
      version: 1,
      methods: {
        npu: { backend: 'AscendSimBackend', callable: 'model.chipcallable', callableId: 5 },
        npu_host: {
          backend: 'AscendSimBackend',
          callable: 'model.chipcallable',
          callableId: 6,
          orchestration: 'host',
        },
      },
    }),
  );
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!hasCc)('AscendSimBackend through a Module', () => {
  test('100 load/unload cycles return device memory to its baseline', () => {
    const runner = new DeviceRunner();
    const registry = createDefaultRegistry({ ascend: { runner } });
    const baseline = runner.stats().committedBytes;
    let peak = 0;
    for (let cycle = 0; cycle < 100; cycle++) {
      const module = new Module(manifestPath, { registry });
      module.load();
      module.loadMethod('npu');
      module.loadMethod('npu_host');
      // Both methods share one device buffer: same bytes, refcount 2.
      expect(runner.stats().liveChipBuffers).toBe(1);
      peak = Math.max(peak, runner.stats().committedBytes);
      expect(module.execute('npu', [])).toEqual([]);
      module.unload();
      expect(runner.stats().committedBytes).toBe(baseline);
    }
    const size = readFileSync(join(dir, 'model.chipcallable')).byteLength;
    expect(peak).toBe(Math.ceil(size / 64) * 64);
    expect(runner.stats().liveChipBuffers).toBe(0);
  });

  test('the callable is uploaded once: bytes uploaded equal its size', () => {
    const runner = new DeviceRunner();
    const module = new Module(manifestPath, {
      registry: createDefaultRegistry({ ascend: { runner } }),
    });
    module.load();
    module.loadMethod('npu');
    const handle = module.methodHandle('npu') as AscendSimHandle;
    expect(handle.bytesUploaded).toBe(readFileSync(join(dir, 'model.chipcallable')).byteLength);
    expect(handle.callable.devOrchSo).toBe(handle.callable.chipDev + handle.callable.headerSize);
    module.dispose();
  });

  test('a registration that fails rolls back and leaves device memory unchanged', () => {
    const runner = new DeviceRunner();
    const module = new Module(manifestPath, {
      registry: createDefaultRegistry({ ascend: { runner } }),
    });
    module.load();
    module.loadMethod('npu');
    const before = runner.stats().committedBytes;
    // Another Module asking for the same callable id: the runner refuses, nothing leaks.
    const other = new Module(manifestPath, {
      registry: createDefaultRegistry({ ascend: { runner } }),
    });
    other.load();
    let error: unknown;
    try {
      other.loadMethod('npu');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ModuleLoaderError);
    expect((error as ModuleLoaderError).code).toBe('ERR_BACKEND_INIT_FAILED');
    expect(runner.stats().committedBytes).toBe(before);
    expect(other.isMethodLoaded('npu')).toBe(false);
    module.dispose();
    other.dispose();
  });
});

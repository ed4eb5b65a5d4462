// Orchestration objects built by the system C compiler: build ids and dynamic symbols as
// the real toolchain lays them out, checked against readelf.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildChipCallable,
  DeviceRunner,
  elfBuildId64,
  fnv1a64,
  loadOrchestration,
  parseChipCallable,
  parseSharedObject,
  SimDevice,
} from '../src/index.js';
import { errorCode } from './support/callables.js';
import {
  type BuiltObject,
  buildSharedObject,
  hasCc,
  hasReadelf,
  makeTempDir,
  readelfBuildId,
  readelfDynamicSymbols,
} from './support/cc.js';

if (!hasCc) {
  console.warn('real-elf tests skipped: no system C compiler `cc` on PATH');
}

const source = `
int aicpu_orchestration_config(void) { return 4; }
int aicpu_orchestration_entry(void *args, int n) { return n + aicpu_orchestration_config(); }
int custom_orchestration(void *args) { return args != 0; }
static int hidden_scale(int x) { return x * 3; }
int exported_table[4] = {1, 2, 3, 4};
int use_hidden(int x) { return hidden_scale(x); }
void framework_bind_runtime(void *rt) { (void)rt; }
void framework_prewarm_graph_recorders(void) {}
`;

describe.skipIf(!hasCc)('real ELF orchestration objects (cc -shared -fPIC -Wl,--build-id)', () => {
  const temp = hasCc ? makeTempDir() : { dir: '', cleanup: () => {} };
  const objects = {} as Record<'sha1' | 'gnu' | 'sysv' | 'md5' | 'none', BuiltObject>;

  beforeAll(() => {
    objects.sha1 = buildSharedObject(temp.dir, 'orch_sha1', source, ['-Wl,--build-id']);
    objects.gnu = buildSharedObject(temp.dir, 'orch_gnu', source, [
      '-Wl,--build-id',
      '-Wl,--hash-style=gnu',
    ]);
    objects.sysv = buildSharedObject(temp.dir, 'orch_sysv', source, [
      '-Wl,--build-id',
      '-Wl,--hash-style=sysv',
    ]);
    objects.md5 = buildSharedObject(temp.dir, 'orch_md5', source, ['-Wl,--build-id=md5']);
    objects.none = buildSharedObject(temp.dir, 'orch_none', source, ['-Wl,--build-id=none']);
  }, 60_000);
  afterAll(() => temp.cleanup());

  it.skipIf(!hasReadelf)(
    'build id hash equals the first 8 bytes of the id readelf -n prints',
    () => {
      for (const key of ['sha1', 'gnu', 'sysv', 'md5'] as const) {
        const object = objects[key];
        const hex = readelfBuildId(object.path);
        expect(hex).not.toBeNull();
        const first8 = Buffer.from((hex as string).slice(0, 16), 'hex');
        expect(elfBuildId64(object.bytes)).toBe(first8.readBigUInt64LE(0));
      }
    },
  );

  it('an object linked without a build id hashes to FNV-1a of its bytes', () => {
    const object = objects.none;
    if (hasReadelf) expect(readelfBuildId(object.path)).toBeNull();
    expect(elfBuildId64(object.bytes)).toBe(fnv1a64(object.bytes));
  });

  it.skipIf(!hasReadelf)('dynamic symbols resolve to the values readelf --dyn-syms prints', () => {
    for (const key of ['sha1', 'gnu', 'sysv'] as const) {
      const object = objects[key];
      const expected = readelfDynamicSymbols(object.path);
      const info = parseSharedObject(object.bytes);
      for (const name of [
        'aicpu_orchestration_entry',
        'custom_orchestration',
        'aicpu_orchestration_config',
        'exported_table',
      ]) {
        expect(expected.get(name)).toBeDefined();
        expect(info.lookup(name)?.value).toBe(expected.get(name));
      }
      expect(info.lookup('hidden_scale')).toBeUndefined();
    }
    expect(parseSharedObject(objects.gnu.bytes).symbolCountSource).toBe('DT_GNU_HASH');
    expect(parseSharedObject(objects.sysv.bytes).symbolCountSource).toBe('DT_HASH');
  });

  it('the entry resolves by the default name and by a custom func_name', () => {
    const bytes = objects.sha1.bytes;
    expect(loadOrchestration(bytes, '', '').entrySymbol).toBe('aicpu_orchestration_entry');
    expect(loadOrchestration(bytes, 'custom_orchestration', '').entrySymbol).toBe(
      'custom_orchestration',
    );
    expect(loadOrchestration(bytes, '', 'aicpu_orchestration_config').configAddress).not.toBeNull();
    expect(errorCode(() => loadOrchestration(bytes, 'exported_table', ''))).toBe(
      'ERR_ELF_SYMBOL_NOT_FOUND',
    );
  });

  it('the runner registers a real .so on the AICPU, which reads it in place on the device', () => {
    const device = new SimDevice({ capacity: 4 * 1024 * 1024 });
    const runner = new DeviceRunner({ device });
    const orch = objects.sha1.bytes;
    const callable = buildChipCallable({
      orch,
      funcName: 'custom_orchestration',
      configName: 'aicpu_orchestration_config',
      children: [{ funcId: 7, core: { binary: new Uint8Array(256).fill(0x90) } }],
    });
    const { callable: registered } = runner.registerCallable(5, callable);
    const expected = readelfDynamicSymbols(objects.sha1.path);
    expect(registered.loaded.entrySymbol).toBe('custom_orchestration');
    if (hasReadelf)
      expect(registered.loaded.entryAddress).toBe(expected.get('custom_orchestration'));
    expect(registered.loaded.buildId64).toBe(elfBuildId64(orch));
    expect(registered.devOrchSo).toBe(registered.chipDev + parseChipCallable(callable).headerSize);
    expect(runner.aicpu.slot(5)?.devOrchSo).toBe(registered.devOrchSo);
    expect(Buffer.from(device.copyFromDevice(registered.devOrchSo, orch.length)).equals(orch)).toBe(
      true,
    );
    expect(runner.stats().aicpuLoads).toBe(1);
    // Host orchestration loads the same object on the host instead.
    runner.registerCallable(6, callable, { orchestration: 'host' });
    expect(runner.stats()).toMatchObject({ hostLoads: 1, aicpuLoads: 1, liveChipBuffers: 1 });
    runner.finalize();
    expect(device.stats().committedBytes).toBe(0);
  });

  it('a non-ELF orch fails the AICPU load and the registration rolls back', () => {
    const device = new SimDevice({ capacity: 4 * 1024 * 1024 });
    const runner = new DeviceRunner({ device });
    runner.registerCallable(0, buildChipCallable({ orch: objects.gnu.bytes }));
    const before = { ...runner.stats(), device: device.stats().committedBytes };
    const notElf = buildChipCallable({
      orch: new TextEncoder().encode('#!/bin/sh\necho not an elf\n'),
    });
    expect(errorCode(() => runner.registerCallable(1, notElf))).toBe('ERR_AICPU_LOAD_FAILED');
    expect(runner.isRegistered(1)).toBe(false);
    expect(runner.stats().liveChipBuffers).toBe(before.liveChipBuffers);
    expect(runner.stats().committedBytes).toBe(before.committedBytes);
    expect(device.stats().committedBytes).toBe(before.device);
    // A shared object without the requested entry fails the same way.
    const wrongEntry = buildChipCallable({
      orch: objects.gnu.bytes,
      funcName: 'nope',
    });
    expect(errorCode(() => runner.registerCallable(1, wrongEntry))).toBe('ERR_AICPU_LOAD_FAILED');
    expect(device.stats().committedBytes).toBe(before.device);
  });
});

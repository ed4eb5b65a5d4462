// Behaviour that follows simpler HEAD (6ebaf7715) where our runner used to differ.
import { describe, expect, it } from 'vitest';
import {
  buildChipCallable,
  DeviceRunner,
  orchestrationObject,
  SimDevice,
  writeSharedObject,
} from '../src/index.js';
import { errorCode, makeCallable } from './support/callables.js';

function setup(options: { hostSymbols?: readonly string[] } = {}) {
  const device = new SimDevice({ capacity: 2 * 1024 * 1024 });
  return { device, runner: new DeviceRunner({ device, ...options }) };
}

/** The code of the error's cause (host and AICPU load failures wrap the ELF error). */
function causeCode(fn: () => unknown): [string | undefined, string | undefined] {
  try {
    fn();
  } catch (error) {
    const e = error as { code?: string; cause?: { code?: string } };
    return [e.code, e.cause?.code];
  }
  return [undefined, undefined];
}

const hostRequired = [
  { name: 'framework_bind_runtime' },
  { name: 'framework_prewarm_graph_recorders' },
];

describe('AICPU load (aicpu_executor.cpp load_orch_so)', () => {
  it('a failed re-load leaves the slot empty, not pointing at the freed buffer', () => {
    const { device, runner } = setup();
    runner.registerCallable(4, makeCallable(1));
    const old = runner.aicpu.slot(4);
    runner.unregisterCallable(4);
    // The old slot survives unregister (as upstream) and points at memory now free.
    expect(runner.aicpu.slot(4)).toBe(old);
    expect(errorCode(() => device.copyFromDevice(old?.devOrchSo ?? 0, 1))).toBe(
      'ERR_DEVICE_BAD_ADDRESS',
    );
    const broken = buildChipCallable({ orch: Uint8Array.of(1, 2, 3) });
    expect(errorCode(() => runner.registerCallable(4, broken))).toBe('ERR_AICPU_LOAD_FAILED');
    expect(runner.aicpu.slot(4)).toBeUndefined();
  });

  it('an empty config_name looks up aicpu_orchestration_config; a missing config is null', () => {
    const { runner } = setup();
    const withConfig = buildChipCallable({ orch: orchestrationObject(1) });
    const loaded = runner.registerCallable(0, withConfig).callable.loaded;
    expect(loaded).toMatchObject({
      entrySymbol: 'aicpu_orchestration_entry',
      configSymbol: 'aicpu_orchestration_config',
      configAddress: 0x2000n,
    });
    const noConfig = buildChipCallable({
      orch: writeSharedObject({ symbols: [{ name: 'aicpu_orchestration_entry' }] }),
    });
    expect(runner.registerCallable(1, noConfig).callable.loaded.configAddress).toBeNull();
  });
});

describe('host orchestration (host_build_graph runtime_maker.cpp register_callable_impl)', () => {
  const hostCallable = (
    symbols: Parameters<typeof writeSharedObject>[0]['symbols'],
    funcName = 'entry',
  ) => buildChipCallable({ orch: writeSharedObject({ symbols }), funcName });

  it('refuses an empty func_name instead of defaulting it', () => {
    const { runner } = setup();
    const bytes = hostCallable([{ name: 'aicpu_orchestration_entry' }, ...hostRequired], '');
    expect(causeCode(() => runner.registerCallable(0, bytes, { orchestration: 'host' }))).toEqual([
      'ERR_HOST_LOAD_FAILED',
      'ERR_ORCH_ENTRY_NAME_EMPTY',
    ]);
    // The AICPU defaults it.
    expect(runner.registerCallable(0, bytes).callable.loaded.entrySymbol).toBe(
      'aicpu_orchestration_entry',
    );
  });

  it('rejects an import the host does not provide (RTLD_NOW); weak imports may stay unresolved', () => {
    const symbols = [
      { name: 'entry' },
      ...hostRequired,
      { name: 'pto2_submit', defined: false },
      { name: '__gmon_start__', defined: false, binding: 2 },
    ];
    const bytes = hostCallable(symbols);
    const strict = setup();
    expect(
      causeCode(() => strict.runner.registerCallable(0, bytes, { orchestration: 'host' })),
    ).toEqual(['ERR_HOST_LOAD_FAILED', 'ERR_ELF_UNRESOLVED_SYMBOL']);
    expect(strict.runner.stats().committedBytes).toBe(0);
    const provided = setup({ hostSymbols: ['pto2_submit'] });
    expect(
      provided.runner.registerCallable(0, bytes, { orchestration: 'host' }).callable.loaded
        .entrySymbol,
    ).toBe('entry');
    // The AICPU loads lazily (RTLD_LAZY): the same object registers on the device path.
    expect(strict.runner.registerCallable(1, bytes).callable.loaded.entrySymbol).toBe('entry');
  });

  it.each(['framework_bind_runtime', 'framework_prewarm_graph_recorders'])(
    'requires %s',
    (missing) => {
      const { runner } = setup();
      const bytes = hostCallable([
        { name: 'entry' },
        ...hostRequired.filter((s) => s.name !== missing),
      ]);
      expect(causeCode(() => runner.registerCallable(0, bytes, { orchestration: 'host' }))).toEqual(
        ['ERR_HOST_LOAD_FAILED', 'ERR_ELF_SYMBOL_NOT_FOUND'],
      );
    },
  );
});

describe('runs, stats and failures', () => {
  it('bind is refused while a run is in flight and the running table stays', () => {
    const { runner } = setup();
    runner.registerCallable(0, makeCallable(1, { funcIdBase: 10 }));
    runner.registerCallable(1, makeCallable(2, { funcIdBase: 500 }));
    const table = new Map(runner.beginRun(0));
    expect(errorCode(() => runner.bind(1))).toBe('ERR_RUN_IN_FLIGHT');
    expect(new Map(runner.dispatch)).toEqual(table);
    runner.endRun();
    expect([...runner.bind(1).keys()]).toEqual([500, 501]);
  });

  it('committed bytes are reported rounded to 64 and at the sizes requested (#1592)', () => {
    const { device, runner } = setup();
    const a = makeCallable(1);
    const b = makeCallable(2, { children: 3 });
    runner.registerCallable(0, a);
    runner.registerCallable(1, b);
    const s = runner.stats();
    expect(s.committedRequestedBytes).toBe(a.length + b.length);
    expect(s.committedBytes).toBe(Math.ceil(a.length / 64) * 64 + Math.ceil(b.length / 64) * 64);
    expect(s.committedBytes).toBeGreaterThan(s.committedRequestedBytes);
    const unrelated = device.malloc(100);
    expect(device.stats()).toMatchObject({
      committedBytes: s.committedBytes + 128,
      committedRequestedBytes: s.committedRequestedBytes + 100,
    });
    expect(runner.stats().deviceCommittedRequestedBytes).toBe(s.committedRequestedBytes + 100);
    device.free(unrelated);
  });

  it('a failed device free drops the registration, keeps the block and counts it', () => {
    const { device, runner } = setup();
    const bytes = makeCallable(1);
    runner.registerCallable(0, bytes);
    const reserved = runner.stats().committedBytes;
    device.failNext('free');
    expect(runner.unregisterCallable(0)).toBe(true);
    expect(runner.stats()).toMatchObject({
      registeredCallables: 0,
      liveChipBuffers: 0,
      committedBytes: 0,
      freeFailures: 1,
      leakedBytes: reserved,
    });
    expect(device.stats()).toMatchObject({ committedBytes: reserved, failedFrees: 1 });
    // The pool does not hand out the leaked block again: the same bytes upload anew.
    expect(runner.registerCallable(0, bytes).uploaded).toBe(true);
    expect(device.stats().liveAllocations).toBe(2);
  });

  it('every refused registration is counted, whatever step refused it', () => {
    const { device, runner } = setup();
    runner.registerCallable(0, makeCallable(1));
    const attempts: [string, () => unknown][] = [
      [
        'ERR_DEVICE_ALLOC_FAILED',
        () => {
          device.failNext('alloc');
          return runner.registerCallable(1, makeCallable(2));
        },
      ],
      [
        'ERR_DEVICE_COPY_FAILED',
        () => {
          device.failNext('h2d');
          return runner.registerCallable(1, makeCallable(2));
        },
      ],
      [
        'ERR_DEVICE_OUT_OF_MEMORY',
        () =>
          runner.registerCallable(
            1,
            buildChipCallable({
              orch: orchestrationObject(1),
              children: [{ funcId: 0, core: { binary: new Uint8Array(3 << 20) } }],
            }),
          ),
      ],
      ['ERR_BUFFER_TOO_SMALL', () => runner.registerCallable(1, new Uint8Array(10))],
      ['ERR_CALLABLE_ALREADY_REGISTERED', () => runner.registerCallable(0, makeCallable(3))],
    ];
    for (const [code, attempt] of attempts) expect(errorCode(attempt)).toBe(code);
    runner.beginRun(0);
    expect(errorCode(() => runner.registerCallable(1, makeCallable(2)))).toBe('ERR_RUN_IN_FLIGHT');
    runner.endRun();
    expect(runner.stats()).toMatchObject({
      registrations: 1,
      failedRegistrations: attempts.length + 1,
    });
  });

  it('device stats count the free-list blocks', () => {
    const device = new SimDevice({ capacity: 64 * 8 });
    const blocks = Array.from({ length: 8 }, () => device.malloc(64));
    expect(device.stats().freeBlocks).toBe(0);
    device.free(blocks[1] as number);
    device.free(blocks[3] as number);
    device.free(blocks[5] as number);
    expect(device.stats().freeBlocks).toBe(3);
    device.free(blocks[2] as number);
    expect(device.stats().freeBlocks).toBe(2);
  });

  it('an injected free failure throws a typed error and leaves the block allocated', () => {
    const device = new SimDevice({ capacity: 1 << 16 });
    const address = device.malloc(100);
    device.failNext('free');
    expect(errorCode(() => device.free(address))).toBe('ERR_DEVICE_FREE_FAILED');
    expect(device.stats()).toMatchObject({ liveAllocations: 1, failedFrees: 1 });
    expect(device.free(address)).toBe(true);
    expect(device.stats().liveAllocations).toBe(0);
  });
});

describe('buildChipCallable names', () => {
  it.each(['funcName', 'configName'] as const)('refuses a %s with a NUL byte', (field) => {
    expect(
      errorCode(() => buildChipCallable({ orch: Uint8Array.of(1), [field]: 'entry\0hidden' })),
    ).toBe('ERR_NAME_CONTAINS_NUL');
  });
});

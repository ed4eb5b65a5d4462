import { describe, expect, it } from 'vitest';
import {
  buildChipCallable,
  CoreCallableLayout,
  DeviceRunner,
  type DeviceRunnerOptions,
  type DeviceRunnerStats,
  orchestrationObject,
  parseChipCallable,
  SimDevice,
} from '../src/index.js';
import { errorCode, makeCallable } from './support/callables.js';

function setup(options: { contentHash?: (bytes: Uint8Array) => bigint } = {}) {
  const device = new SimDevice({ capacity: 2 * 1024 * 1024 });
  const runner = new DeviceRunner({ device, ...options });
  return { device, runner };
}

function snapshot(runner: DeviceRunner, device: SimDevice) {
  const s: DeviceRunnerStats = runner.stats();
  return {
    buffers: runner.chipBuffers().map((b) => [b.devAddr, b.refcount]),
    committed: s.committedBytes,
    device: device.stats().committedBytes,
    live: device.stats().liveAllocations,
    registered: s.registeredCallables,
  };
}

describe('DeviceRunner: shared buffers and uploads', () => {
  it('same bytes under two cids share one buffer: refcount 2 → 1 → 0', () => {
    const { device, runner } = setup();
    const bytes = makeCallable(1);
    const first = runner.registerCallable(3, bytes);
    const second = runner.registerCallable(9, bytes.slice());
    expect(first.uploaded).toBe(true);
    expect(second.uploaded).toBe(false);
    expect(second.bytesUploaded).toBe(0);
    expect(second.callable.chipDev).toBe(first.callable.chipDev);
    expect(runner.chipBuffers().map((b) => b.refcount)).toEqual([2]);
    expect(runner.stats().dedupHits).toBe(1);
    runner.unregisterCallable(3);
    expect(runner.chipBuffers().map((b) => b.refcount)).toEqual([1]);
    expect(device.stats().liveAllocations).toBe(1);
    runner.unregisterCallable(9);
    expect(runner.chipBuffers()).toEqual([]);
    expect(device.stats().committedBytes).toBe(0);
  });

  it('device bytes uploaded per registration equal total_size (the orch is not uploaded twice)', () => {
    const { device, runner } = setup();
    for (let i = 0; i < 5; i++) {
      const bytes = makeCallable(10 + i, { children: i });
      const before = device.stats().h2dBytes;
      const result = runner.registerCallable(i, bytes);
      expect(device.stats().h2dBytes - before).toBe(bytes.length);
      expect(result.bytesUploaded).toBe(bytes.length);
      expect(result.callable.devOrchSo).toBe(result.callable.chipDev + result.callable.headerSize);
      expect(device.stats().h2dCopies).toBe(i + 1);
    }
    expect(runner.stats().bytesUploaded).toBe(device.stats().h2dBytes);
  });

  it('the orch slice on the device is byte-identical; only child resolved_addr are patched', () => {
    const { device, runner } = setup();
    const bytes = makeCallable(7, { children: 3 });
    const pristine = bytes.slice();
    const parsed = parseChipCallable(bytes);
    const { callable } = runner.registerCallable(0, bytes);
    // The caller's bytes are never modified.
    expect(Buffer.from(bytes).equals(Buffer.from(pristine))).toBe(true);
    const onDevice = device.copyFromDevice(callable.chipDev, parsed.totalSize);
    expect(
      Buffer.from(
        onDevice.subarray(parsed.headerSize, parsed.headerSize + parsed.binarySize),
      ).equals(Buffer.from(parsed.orch)),
    ).toBe(true);
    expect(
      Buffer.from(device.copyFromDevice(callable.devOrchSo, callable.orchSize)).equals(
        Buffer.from(parsed.orch),
      ),
    ).toBe(true);
    const patchOffsets = new Set(
      parsed.children.map((c) => c.imageOffset + CoreCallableLayout.resolvedAddr),
    );
    const view = new DataView(onDevice.buffer);
    for (const child of parsed.children) {
      const at = child.imageOffset + CoreCallableLayout.resolvedAddr;
      expect(view.getBigUint64(at, true)).toBe(BigInt(callable.chipDev + child.imageOffset + 192));
    }
    const differing: number[] = [];
    onDevice.forEach((b, i) => {
      if (b !== bytes[i]) differing.push(i);
    });
    for (const i of differing) {
      expect([...patchOffsets].some((at) => i >= at && i < at + 8)).toBe(true);
    }
    expect(differing.length).toBeGreaterThan(0);
  });

  it('a Node Buffer at a non-zero byteOffset is read correctly and never written', () => {
    const { device, runner } = setup();
    const bytes = makeCallable(8, { children: 2 });
    const backing = Buffer.alloc(bytes.length + 13, 0xee);
    backing.set(bytes, 13);
    const view = backing.subarray(13); // Buffer#slice would alias this memory
    const pristine = Buffer.from(backing);
    const { callable } = runner.registerCallable(0, view);
    expect(backing.equals(pristine)).toBe(true);
    const parsed = parseChipCallable(bytes);
    const onDevice = device.copyFromDevice(callable.chipDev, parsed.totalSize);
    const child = parsed.children[0];
    expect(new DataView(onDevice.buffer).getBigUint64((child?.imageOffset ?? 0) + 136, true)).toBe(
      BigInt(callable.chipDev + (child?.imageOffset ?? 0) + 192),
    );
    // A later registration of the same content hits the host copy kept by the pool.
    backing.fill(0, 13);
    expect(runner.registerCallable(1, bytes).uploaded).toBe(false);
  });

  it('a content-hash collision gets its own buffer; equal bytes still share', () => {
    const { device, runner } = setup({ contentHash: () => 42n });
    const a = makeCallable(1);
    const b = makeCallable(2);
    runner.registerCallable(0, a);
    runner.registerCallable(1, b);
    runner.registerCallable(2, a);
    expect(runner.stats()).toMatchObject({ liveChipBuffers: 2, hashCollisions: 1, dedupHits: 1 });
    expect(runner.callable(1)?.chipDev).not.toBe(runner.callable(0)?.chipDev);
    expect(runner.callable(2)?.chipDev).toBe(runner.callable(0)?.chipDev);
    // Each device copy holds its own content.
    const orchB = parseChipCallable(b).orch;
    const cb = runner.callable(1);
    expect(
      Buffer.from(device.copyFromDevice(cb?.devOrchSo ?? 0, orchB.length)).equals(
        Buffer.from(orchB),
      ),
    ).toBe(true);
    for (const cid of [0, 1, 2]) runner.unregisterCallable(cid);
    expect(device.stats().committedBytes).toBe(0);
  });

  it('CHIP_MAX_TENSOR_ARGS=128 runners accept 128-layout callables', () => {
    const device = new SimDevice({ capacity: 1 << 20 });
    const runner = new DeviceRunner({ device, maxTensorArgs: 128 });
    const { callable } = runner.registerCallable(0, makeCallable(1, { maxTensorArgs: 128 }));
    expect(callable.headerSize).toBe(8864);
    expect(callable.devOrchSo).toBe(callable.chipDev + 8864);
    expect(errorCode(() => runner.registerCallable(1, makeCallable(1)))).toBeDefined();
  });
});

describe('DeviceRunner: every failure path leaves the pool and committed bytes unchanged', () => {
  type Case = [string, (r: DeviceRunner, d: SimDevice) => unknown, string];
  const cases: Case[] = [
    [
      'alloc failure',
      (r, d) => {
        d.failNext('alloc');
        return r.registerCallable(5, makeCallable(50));
      },
      'ERR_DEVICE_ALLOC_FAILED',
    ],
    [
      'H2D failure',
      (r, d) => {
        d.failNext('h2d');
        return r.registerCallable(5, makeCallable(50));
      },
      'ERR_DEVICE_COPY_FAILED',
    ],
    [
      'out of device memory',
      (r) =>
        r.registerCallable(
          5,
          buildChipCallable({
            orch: orchestrationObject(1),
            children: [{ funcId: 0, core: { binary: new Uint8Array(3 << 20) } }],
          }),
        ),
      'ERR_DEVICE_OUT_OF_MEMORY',
    ],
    ['cid -1', (r) => r.registerCallable(-1, makeCallable(50)), 'ERR_CALLABLE_ID_OUT_OF_RANGE'],
    ['cid 64', (r) => r.registerCallable(64, makeCallable(50)), 'ERR_CALLABLE_ID_OUT_OF_RANGE'],
    ['cid 1.5', (r) => r.registerCallable(1.5, makeCallable(50)), 'ERR_CALLABLE_ID_OUT_OF_RANGE'],
    [
      'duplicate cid (new bytes)',
      (r) => r.registerCallable(0, makeCallable(50)),
      'ERR_CALLABLE_ALREADY_REGISTERED',
    ],
    [
      'duplicate cid (same bytes: a dedup hit)',
      (r) => r.registerCallable(0, makeCallable(1)),
      'ERR_CALLABLE_ALREADY_REGISTERED',
    ],
    [
      'empty orch',
      (r) => r.registerCallable(5, buildChipCallable({ orch: new Uint8Array(0) })),
      'ERR_EMPTY_ORCHESTRATION',
    ],
    [
      'func_id 1024',
      (r) => r.registerCallable(5, makeCallable(50, { funcIdBase: 1023 })),
      'ERR_FUNC_ID_OUT_OF_RANGE',
    ],
    [
      'func_id -1',
      (r) => r.registerCallable(5, makeCallable(50, { funcIdBase: -1 })),
      'ERR_FUNC_ID_OUT_OF_RANGE',
    ],
    [
      'AICPU load failure (not ELF)',
      (r) => r.registerCallable(5, buildChipCallable({ orch: Uint8Array.of(1, 2, 3) })),
      'ERR_AICPU_LOAD_FAILED',
    ],
    [
      'AICPU load failure (missing entry)',
      (r) =>
        r.registerCallable(
          5,
          buildChipCallable({ orch: orchestrationObject(1), funcName: 'absent' }),
        ),
      'ERR_AICPU_LOAD_FAILED',
    ],
    [
      'host load failure',
      (r) =>
        r.registerCallable(5, buildChipCallable({ orch: Uint8Array.of(1, 2, 3) }), {
          orchestration: 'host',
        }),
      'ERR_HOST_LOAD_FAILED',
    ],
    [
      'malformed bytes',
      (r) => r.registerCallable(5, makeCallable(50).subarray(0, 9000)),
      'ERR_BUFFER_TOO_SMALL',
    ],
    [
      'bad orchestration option',
      (r) => r.registerCallable(5, makeCallable(50), { orchestration: 'gpu' as 'host' }),
      'ERR_INVALID_ARGUMENT',
    ],
  ];

  it.each(cases)('%s', (_name, act, code) => {
    const { device, runner } = setup();
    runner.registerCallable(0, makeCallable(1));
    runner.registerCallable(1, makeCallable(2));
    runner.registerCallable(2, makeCallable(1));
    const before = snapshot(runner, device);
    expect(errorCode(() => act(runner, device))).toBe(code);
    expect(snapshot(runner, device)).toEqual(before);
    expect(device.stats().unknownFrees).toBe(0);
    expect(runner.isRegistered(5)).toBe(false);
    // The runner still works afterwards and the cid is free.
    runner.registerCallable(5, makeCallable(60));
    expect(runner.stats().registeredCallables).toBe(4);
  });

  it('an AICPU failure on a dedup hit restores the refcount of the shared buffer', () => {
    const { device, runner } = setup();
    const shared = makeCallable(3);
    const { callable } = runner.registerCallable(0, shared);
    // Corrupt the orch on the device: the AICPU reads device memory, not the host bytes.
    device.copyToDevice(callable.devOrchSo, Uint8Array.of(0, 0, 0, 0));
    const before = snapshot(runner, device);
    expect(errorCode(() => runner.registerCallable(1, shared))).toBe('ERR_AICPU_LOAD_FAILED');
    expect(snapshot(runner, device)).toEqual(before);
    expect(runner.chipBuffers()[0]?.refcount).toBe(1);
    expect(errorCode(() => runner.registerCallable(70, shared))).toBe(
      'ERR_CALLABLE_ID_OUT_OF_RANGE',
    );
    expect(runner.chipBuffers()[0]?.refcount).toBe(1);
    // Host orchestration loads the caller's bytes, so it still works.
    runner.registerCallable(1, shared, { orchestration: 'host' });
    expect(runner.chipBuffers()[0]?.refcount).toBe(2);
  });

  it.each([
    ['1024', 1023],
    ['-1', -1],
  ])('a func_id of %s is refused before any device allocation or copy', (_name, funcIdBase) => {
    const { device, runner } = setup();
    runner.registerCallable(0, makeCallable(1));
    const deviceBefore = device.stats();
    const runnerBefore = runner.stats();
    const bad = makeCallable(50, { funcIdBase });
    expect(errorCode(() => runner.registerCallable(5, bad))).toBe('ERR_FUNC_ID_OUT_OF_RANGE');
    // A dedup hit uploads nothing either: the same bytes are refused before the pool lookup.
    expect(errorCode(() => runner.registerCallable(6, bad))).toBe('ERR_FUNC_ID_OUT_OF_RANGE');
    expect(device.stats()).toEqual(deviceBefore);
    expect(runner.stats()).toEqual({
      ...runnerBefore,
      failedRegistrations: runnerBefore.failedRegistrations + 2,
    });
  });
});

describe('DeviceRunner: func_id table per chip buffer', () => {
  it('every cid holding a buffer shares its one table, made at upload', () => {
    const { runner } = setup();
    const bytes = makeCallable(1, { children: 3, funcIdBase: 7 });
    const first = runner.registerCallable(0, bytes).callable;
    const second = runner.registerCallable(1, bytes.slice()).callable;
    expect(second.dispatch).toBe(first.dispatch);
    const parsed = parseChipCallable(bytes);
    expect(first.dispatch).toEqual(
      parsed.children.map((child) => [child.funcId, first.chipDev + child.imageOffset]),
    );
    // The table goes with its buffer: a new upload of the same bytes gets a new one.
    runner.unregisterCallable(0);
    runner.unregisterCallable(1);
    const again = runner.registerCallable(2, bytes).callable;
    expect(again.dispatch).toEqual(
      parsed.children.map((child) => [child.funcId, again.chipDev + child.imageOffset]),
    );
  });
});

describe('DeviceRunner: AICPU, bind, runs, finalize', () => {
  it('the AICPU slot survives unregister and is replaced on re-register', () => {
    const { runner } = setup();
    runner.registerCallable(4, makeCallable(1));
    const slot = runner.aicpu.slot(4);
    expect(slot?.devOrchSo).toBe(runner.callable(4)?.devOrchSo);
    runner.unregisterCallable(4);
    expect(runner.aicpu.slot(4)).toBe(slot);
    runner.registerCallable(4, makeCallable(2));
    expect(runner.aicpu.slot(4)).not.toBe(slot);
    expect(runner.aicpu.slot(4)?.buildId64).toBe(runner.callable(4)?.loaded.buildId64);
    expect(runner.stats().aicpuLoads).toBe(2);
  });

  it('host orchestration holds a chip-buffer lease and skips the AICPU', () => {
    const { device, runner } = setup();
    const { callable } = runner.registerCallable(1, makeCallable(1), { orchestration: 'host' });
    expect(runner.aicpu.slot(1)).toBeUndefined();
    expect(runner.stats()).toMatchObject({ hostLoads: 1, aicpuLoads: 0, liveChipBuffers: 1 });
    expect(callable.loaded.entrySymbol).toBe('aicpu_orchestration_entry');
    runner.unregisterCallable(1);
    expect(device.stats().committedBytes).toBe(0);
  });

  it('bind clears the dispatch table then replays the callable pairs', () => {
    const { runner } = setup();
    const a = runner.registerCallable(0, makeCallable(1, { children: 3, funcIdBase: 10 })).callable;
    const bBytes = makeCallable(2, { children: 1, funcIdBase: 500 });
    const b = runner.registerCallable(1, bBytes).callable;
    const table = runner.bind(0);
    expect([...table.keys()]).toEqual([10, 11, 12]);
    expect(table.get(10)).toBe(a.dispatch[0]?.[1]);
    expect(runner.bind(1).size).toBe(1);
    expect(runner.dispatch.has(10)).toBe(false);
    const child = parseChipCallable(bBytes).children[0];
    expect(runner.dispatch.get(500)).toBe(b.chipDev + (child?.imageOffset ?? Number.NaN));
    expect(errorCode(() => runner.bind(33))).toBe('ERR_CALLABLE_NOT_REGISTERED');
    expect(runner.dispatch.size).toBe(0);
  });

  it('unregistering the bound callable clears its (soon stale) dispatch entries', () => {
    const { runner } = setup();
    runner.registerCallable(0, makeCallable(1));
    runner.bind(0);
    expect(runner.dispatch.size).toBe(2);
    runner.unregisterCallable(0);
    expect(runner.dispatch.size).toBe(0);
    expect(runner.unregisterCallable(0)).toBe(false);
  });

  it('registration and unregistration are refused while a run is in flight', () => {
    const { runner } = setup();
    runner.registerCallable(0, makeCallable(1));
    runner.beginRun(0);
    expect(runner.isRunInFlight).toBe(true);
    expect(errorCode(() => runner.registerCallable(1, makeCallable(2)))).toBe('ERR_RUN_IN_FLIGHT');
    expect(errorCode(() => runner.unregisterCallable(0))).toBe('ERR_RUN_IN_FLIGHT');
    expect(runner.stats().liveChipBuffers).toBe(1);
    runner.endRun();
    runner.registerCallable(1, makeCallable(2));
    expect(runner.unregisterCallable(0)).toBe(true);
  });

  it('finalize frees every buffer regardless of refcount, resets counters, and is idempotent', () => {
    const { device, runner } = setup();
    const baselineAddr = device.malloc(1000);
    const bytes = makeCallable(1);
    runner.registerCallable(0, bytes);
    runner.registerCallable(1, bytes);
    runner.registerCallable(2, makeCallable(2), { orchestration: 'host' });
    runner.bind(0);
    runner.finalize();
    const zero = {
      registeredCallables: 0,
      liveChipBuffers: 0,
      committedBytes: 0,
      peakCommittedBytes: 0,
      aicpuLoads: 0,
      hostLoads: 0,
      bytesUploaded: 0,
      uploads: 0,
      dedupHits: 0,
    };
    expect(runner.stats()).toMatchObject(zero);
    expect(runner.dispatch.size).toBe(0);
    expect(device.stats().committedBytes).toBe(1024);
    runner.finalize();
    expect(runner.stats()).toMatchObject(zero);
    expect(device.stats().unknownFrees).toBe(0);
    // The runner is usable again and cids are free.
    runner.registerCallable(0, bytes);
    runner.finalize();
    device.free(baselineAddr);
    expect(device.stats().committedBytes).toBe(0);
  });

  it('finalize after a device failure forgets buffers without freeing them', () => {
    const { device, runner } = setup();
    runner.registerCallable(0, makeCallable(1));
    device.abandon();
    runner.finalize();
    expect(runner.stats().liveChipBuffers).toBe(0);
    expect(device.stats().abandonedBytes).toBeGreaterThan(0);
    expect(device.stats().frees).toBe(0);
  });

  it('stats report per-callable bytes and peak committed bytes', () => {
    const { runner } = setup();
    const a = makeCallable(1);
    const b = makeCallable(2, { children: 4 });
    runner.registerCallable(2, a);
    runner.registerCallable(1, b);
    const s = runner.stats();
    expect(s.perCallable.map((c) => [c.cid, c.bytes, c.refcount])).toEqual([
      [1, b.length, 1],
      [2, a.length, 1],
    ]);
    const reserved = Math.ceil(a.length / 64) * 64 + Math.ceil(b.length / 64) * 64;
    expect(s.committedBytes).toBe(reserved);
    runner.unregisterCallable(1);
    expect(runner.stats().peakCommittedBytes).toBe(reserved);
  });

  it('the pre-#1295 design is no longer a runner option (it lives in the benchmark)', () => {
    expect(
      errorCode(() => new DeviceRunner({ memoryDesign: 'legacy-1082' } as DeviceRunnerOptions)),
    ).toBe('ERR_INVALID_ARGUMENT');
  });
});

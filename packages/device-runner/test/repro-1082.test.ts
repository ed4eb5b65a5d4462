// simpler issue #1082: a long-lived worker registering and unregistering distinct callables
// must return device memory; the orch must not be uploaded a second time.
import { describe, expect, it } from 'vitest';
import { Legacy1082Runner } from '../bench/legacy-1082.js';
import {
  alignUp,
  buildChipCallable,
  DeviceRunner,
  orchestrationObject,
  parseChipCallable,
  SimDevice,
} from '../src/index.js';
import { errorCode, makeCallable } from './support/callables.js';

const N = 40;

function setup() {
  const device = new SimDevice({ capacity: 8 * 1024 * 1024 });
  // Memory the runner does not own: the baseline it must come back to.
  const unrelated = device.malloc(12_345);
  const baseline = device.stats().committedBytes;
  const callables = Array.from({ length: N }, (_, i) => makeCallable(i + 1));
  const parsed = callables.map((bytes) => parseChipCallable(bytes));
  return { device, unrelated, baseline, callables, parsed };
}

describe('issue #1082 repro: register N distinct callables, unregister all', () => {
  it('refcounted design: pool empty and committed bytes back at the baseline', () => {
    const { device, baseline, callables, parsed } = setup();
    const runner = new DeviceRunner({ device });
    const uploaded = callables.map((bytes, i) => runner.registerCallable(i, bytes).bytesUploaded);
    for (let i = 0; i < N; i++) runner.unregisterCallable(i);
    expect(runner.stats().liveChipBuffers).toBe(0);
    expect(runner.stats().committedBytes).toBe(0);
    expect(device.stats().committedBytes).toBe(baseline);
    expect(device.stats().liveAllocations).toBe(1);
    // Each registration moved exactly its total_size: the orch was not uploaded twice.
    expect(uploaded).toEqual(parsed.map((p) => p.totalSize));
    expect(device.stats().h2dBytes).toBe(parsed.reduce((sum, p) => sum + p.totalSize, 0));
  });

  it('the pre-fix design keeps every chip buffer and uploads the orch twice', () => {
    const { device, baseline, unrelated, callables, parsed } = setup();
    const legacy = new Legacy1082Runner(device);
    const uploaded = callables.map((bytes, i) => legacy.registerCallable(i, bytes).bytesUploaded);
    expect(uploaded).toEqual(parsed.map((p) => p.totalSize + p.binarySize));
    expect(legacy.stats()).toMatchObject({ liveChipBuffers: N, liveOrchCopies: N });
    for (let i = 0; i < N; i++) legacy.unregisterCallable(i);
    // The orch copies were refcounted and are gone; the chip buffers are the leak.
    const chipBytes = parsed.reduce((sum, p) => sum + alignUp(p.totalSize, 64), 0);
    expect(legacy.stats()).toMatchObject({
      liveChipBuffers: N,
      liveOrchCopies: 0,
      committedBytes: chipBytes,
    });
    expect(device.stats().committedBytes).toBe(baseline + chipBytes);
    legacy.finalize();
    expect(device.stats().committedBytes).toBe(baseline);
    device.free(unrelated);
    expect(device.stats().committedBytes).toBe(0);
  });
});

describe('the pre-fix model follows e7de19eee^ in the details that move the figures', () => {
  it('one orch copy per build id, shared by refcount and freed with its last registration', () => {
    const device = new SimDevice({ capacity: 1 << 20 });
    const legacy = new Legacy1082Runner(device);
    const orch = orchestrationObject(9);
    const kernel = (fill: number) => ({
      funcId: 0,
      core: { binary: new Uint8Array(64).fill(fill) },
    });
    const a = buildChipCallable({ orch, children: [kernel(1)] });
    const b = buildChipCallable({ orch, children: [kernel(2)] });
    const first = legacy.registerCallable(0, a);
    const second = legacy.registerCallable(1, b);
    expect(second.devOrchSo).toBe(first.devOrchSo);
    expect(second.bytesUploaded).toBe(parseChipCallable(b).totalSize);
    legacy.unregisterCallable(0);
    expect(legacy.stats().liveOrchCopies).toBe(1);
    legacy.unregisterCallable(1);
    expect(legacy.stats()).toMatchObject({ liveOrchCopies: 0, liveChipBuffers: 2 });
  });

  it('a callable without children uploads no chip buffer; the AICPU reads the orch copy', () => {
    const device = new SimDevice({ capacity: 1 << 20 });
    const legacy = new Legacy1082Runner(device);
    const bytes = buildChipCallable({ orch: orchestrationObject(3) });
    const result = legacy.registerCallable(0, bytes);
    expect(result.chipDev).toBe(0);
    expect(result.bytesUploaded).toBe(parseChipCallable(bytes).binarySize);
    expect(legacy.aicpu.slot(0)?.devOrchSo).toBe(result.devOrchSo);
  });

  it('a failed registration drops its orch copy but leaks its chip buffer', () => {
    const device = new SimDevice({ capacity: 1 << 20 });
    const legacy = new Legacy1082Runner(device);
    const badEntry = makeCallable(4, { children: 1 });
    const parsed = parseChipCallable(badEntry);
    legacy.registerCallable(0, makeCallable(5));
    // Same cid again: refused after the upload, as record_device_orch_callable checks late.
    expect(errorCode(() => legacy.registerCallable(0, badEntry))).toBe(
      'ERR_CALLABLE_ALREADY_REGISTERED',
    );
    expect(legacy.stats()).toMatchObject({ liveChipBuffers: 2, liveOrchCopies: 1 });
    const notElf = buildChipCallable({
      orch: Uint8Array.of(1, 2, 3),
      children: [{ funcId: 0, core: { binary: new Uint8Array(8) } }],
    });
    expect(errorCode(() => legacy.registerCallable(1, notElf))).toBe('ERR_AICPU_LOAD_FAILED');
    expect(legacy.stats()).toMatchObject({ liveChipBuffers: 3, liveOrchCopies: 1 });
    expect(parsed.children).toHaveLength(1);
  });
});

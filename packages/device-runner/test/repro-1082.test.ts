// simpler issue #1082: a long-lived worker registering and unregistering distinct callables
// must return device memory; the orch must not be uploaded a second time.
import { describe, expect, it } from 'vitest';
import { DeviceRunner, parseChipCallable, SimDevice } from '../src/index.js';
import { makeCallable } from './support/callables.js';

const N = 40;

function churn(memoryDesign: 'refcounted' | 'legacy-1082') {
  const device = new SimDevice({ capacity: 8 * 1024 * 1024 });
  // Memory the runner does not own: the baseline it must come back to.
  const unrelated = device.malloc(12_345);
  const baseline = device.stats().committedBytes;
  const runner = new DeviceRunner({ device, memoryDesign });
  const callables = Array.from({ length: N }, (_, i) => makeCallable(i + 1));
  const totalSizes = callables.map((bytes) => parseChipCallable(bytes).totalSize);
  const uploadedPerRegistration: number[] = [];
  for (let i = 0; i < N; i++) {
    const result = runner.registerCallable(i, callables[i] as Uint8Array);
    uploadedPerRegistration.push(result.bytesUploaded);
  }
  for (let i = 0; i < N; i++) runner.unregisterCallable(i);
  return { device, runner, baseline, unrelated, totalSizes, uploadedPerRegistration };
}

describe('issue #1082 repro: register N distinct callables, unregister all', () => {
  it('refcounted design: pool empty and committed bytes back at the baseline', () => {
    const { device, runner, baseline, totalSizes, uploadedPerRegistration } = churn('refcounted');
    expect(runner.stats().liveChipBuffers).toBe(0);
    expect(runner.stats().committedBytes).toBe(0);
    expect(device.stats().committedBytes).toBe(baseline);
    expect(device.stats().liveAllocations).toBe(1);
    // Each registration moved exactly its total_size: the orch was not uploaded twice.
    expect(uploadedPerRegistration).toEqual(totalSizes);
    expect(device.stats().h2dBytes).toBe(totalSizes.reduce((a, b) => a + b, 0));
  });

  it('legacy-1082 design: buffers leak until finalize and the orch is uploaded twice', () => {
    const { device, runner, baseline, unrelated, totalSizes, uploadedPerRegistration } =
      churn('legacy-1082');
    expect(runner.stats().liveChipBuffers).toBe(N);
    expect(runner.stats().liveOrchSoBuffers).toBe(N);
    expect(device.stats().committedBytes).toBeGreaterThan(baseline);
    const orchSizes = Array.from({ length: N }, (_, i) => {
      return parseChipCallable(makeCallable(i + 1)).binarySize;
    });
    expect(uploadedPerRegistration).toEqual(totalSizes.map((t, i) => t + (orchSizes[i] as number)));
    runner.finalize();
    expect(device.stats().committedBytes).toBe(baseline);
    device.free(unrelated);
    expect(device.stats().committedBytes).toBe(0);
  });
});

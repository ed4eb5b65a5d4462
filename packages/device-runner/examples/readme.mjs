import { buildChipCallable, DeviceRunner, writeSharedObject } from '@memlayer/device-runner';

// A minimal orchestration object: an ELF64 shared object exporting the entry symbol the
// AICPU resolves (a real one comes from your toolchain: cc -shared -fPIC -Wl,--build-id).
const orch = writeSharedObject({
  symbols: [{ name: 'aicpu_orchestration_entry' }, { name: 'aicpu_orchestration_config' }],
});
const kernel = new Uint8Array(512).fill(0x90); // stands in for an AICore kernel binary
const callable = buildChipCallable({
  orch,
  children: [{ funcId: 0, core: { signature: [1, 2], binary: kernel } }],
});

const runner = new DeviceRunner({ deviceCapacity: 64 << 20 });
const { callable: info, bytesUploaded } = runner.registerCallable(0, callable);
console.log(`uploaded ${bytesUploaded} of ${callable.length} bytes`);
console.log(`orch read in place: ${info.devOrchSo === info.chipDev + info.headerSize}`);
const table = runner.beginRun(0); // func_id -> device address of its CoreCallable
console.log(`func_ids bound: ${[...table.keys()].join(', ')}`);
runner.endRun();
runner.unregisterCallable(0); // the last lease: the device buffer is freed
console.log(`committed after unregister: ${runner.stats().committedBytes}`);

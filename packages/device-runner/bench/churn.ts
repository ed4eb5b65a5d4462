// Register/unregister churn, both memory designs side by side in one run.
// Usage: pnpm --filter @memlayer/device-runner bench [-- --cycles=10000 --callables=50]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildChipCallable,
  parseChipCallable,
  readGnuBuildId,
  SimDevice,
  writeSharedObject,
} from '../src/index.js';
import { DESIGNS as designs, makeDesign } from './designs.js';

function arg(name: string, fallback: number): number {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.split('=')[1]) : fallback;
}
const CYCLES = arg('cycles', 10_000);
const CALLABLES = arg('callables', 50);
const CAPACITY = arg('capacity-mib', 256) * 1024 * 1024;

/** A real orchestration object from the system compiler when there is one. */
function compiledOrch(): Uint8Array | null {
  const dir = mkdtempSync(join(tmpdir(), 'device-runner-bench-'));
  try {
    writeFileSync(
      join(dir, 'orch.c'),
      'int aicpu_orchestration_entry(void *a, int n) { return n; }\nint aicpu_orchestration_config(void) { return 1; }\n',
    );
    execFileSync(
      'cc',
      ['-shared', '-fPIC', '-Wl,--build-id', '-o', join(dir, 'orch.so'), join(dir, 'orch.c')],
      {
        stdio: 'ignore',
      },
    );
    return new Uint8Array(readFileSync(join(dir, 'orch.so')));
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Template {
  bytes: Uint8Array;
  /** Offsets to stamp per generation so every registration is new content (incl. build id). */
  buildIdAt: number;
  kernelAt: number;
}

function makeTemplate(orch: Uint8Array, index: number, kernels: number): Template {
  const bytes = buildChipCallable({
    orch,
    children: Array.from({ length: kernels }, (_, k) => ({
      funcId: k,
      core: {
        signature: [1, 2],
        binary: new Uint8Array(512 + 64 * ((index + k) % 7)).fill(index & 0xff),
      },
    })),
  });
  const parsed = parseChipCallable(bytes);
  const id = readGnuBuildId(orch) as Uint8Array;
  const buildIdAt = parsed.headerSize + Buffer.from(orch).indexOf(Buffer.from(id));
  const kernelAt = (parsed.children[0]?.imageOffset ?? 0) + 192;
  return { bytes, buildIdAt, kernelAt };
}

function stamp(template: Template, generation: number, index: number): Uint8Array {
  const bytes = template.bytes.slice();
  const view = new DataView(bytes.buffer);
  view.setUint32(template.buildIdAt, generation, true);
  view.setUint32(template.buildIdAt + 4, index, true);
  view.setUint32(template.kernelAt, generation, true);
  return bytes;
}

const syntheticOrch = writeSharedObject({
  symbols: [{ name: 'aicpu_orchestration_entry' }, { name: 'aicpu_orchestration_config' }],
  buildId: new Uint8Array(20).fill(0x11),
});
const realOrch = compiledOrch();
const fmt = (n: number) => n.toLocaleString('en-US');
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MiB`;

console.log(
  `device-runner churn bench — cycles=${CYCLES}, callables/cycle=${CALLABLES}, device=${mib(CAPACITY)}`,
);
console.log(
  `node ${process.version}; orch: synthetic ${syntheticOrch.length} B${realOrch ? `, cc-built ${realOrch.length} B` : ' (cc not found)'}\n`,
);

// 1. Device bytes uploaded per registration vs total_size.
console.log('1) device bytes uploaded per registration / total_size');
for (const [label, orch] of [
  ['synthetic orch', syntheticOrch],
  ['cc-built orch', realOrch],
] as const) {
  if (!orch) continue;
  const row: string[] = [];
  for (const design of designs) {
    const runner = makeDesign(design, new SimDevice({ capacity: CAPACITY }));
    let uploaded = 0;
    let total = 0;
    for (let i = 0; i < CALLABLES; i++) {
      const bytes = stamp(makeTemplate(orch, i, 4), 1, i);
      uploaded += runner.register(i % 64, bytes);
      total += bytes.length;
      runner.unregister(i % 64);
    }
    row.push(`${design}: ${(uploaded / total).toFixed(3)}x`);
    runner.finalize();
  }
  console.log(`   ${label.padEnd(15)} ${row.join('   ')}`);
}

// 2. Churn: each cycle registers CALLABLES never-seen callables and unregisters them.
console.log(
  `\n2) churn: ${fmt(CYCLES)} cycles x ${CALLABLES} distinct callables (new content every cycle)`,
);
const templates = Array.from({ length: CALLABLES }, (_, i) => makeTemplate(syntheticOrch, i, 4));
for (const design of designs) {
  const device = new SimDevice({ capacity: CAPACITY });
  const baselineAddr = device.malloc(4096);
  const baseline = device.stats().committedBytes;
  const runner = makeDesign(design, device);
  let registerNs = 0n;
  let unregisterNs = 0n;
  let registrations = 0;
  let stoppedAt: string | null = null;
  const checkpoints: string[] = [];
  for (let cycle = 1; cycle <= CYCLES && !stoppedAt; cycle++) {
    const batch = templates.map((t, i) => stamp(t, cycle, i));
    for (let i = 0; i < CALLABLES; i++) {
      const t0 = process.hrtime.bigint();
      try {
        runner.register(i % 64, batch[i] as Uint8Array);
      } catch (error) {
        stoppedAt = `${(error as { code?: string }).code} at cycle ${fmt(cycle)}`;
        break;
      }
      registerNs += process.hrtime.bigint() - t0;
      registrations++;
    }
    const t1 = process.hrtime.bigint();
    for (let i = 0; i < CALLABLES; i++) runner.unregister(i % 64);
    unregisterNs += process.hrtime.bigint() - t1;
    if ([1, 10, 100, 1000, CYCLES].includes(cycle)) {
      checkpoints.push(`c${fmt(cycle)}=${mib(device.stats().committedBytes - baseline)}`);
    }
  }
  const d = device.stats();
  console.log(`   ${design}`);
  console.log(
    `     register   ${fmt(Math.round(registrations / (Number(registerNs) / 1e9)))} ops/s   unregister ${fmt(Math.round(registrations / (Number(unregisterNs) / 1e9)))} ops/s`,
  );
  console.log(
    `     committed above baseline: ${checkpoints.join('  ')}${stoppedAt ? `  — stopped: ${stoppedAt}` : ''}`,
  );
  console.log(
    `     end: live device buffers ${fmt(runner.liveBuffers())}, committed ${mib(d.committedBytes - baseline)} above baseline, peak ${mib(d.peakBytes - baseline)}, fragmentation ${d.fragmentation.toFixed(3)}, free blocks ${fmt(d.freeBlocks)}`,
  );
  runner.finalize();
  device.free(baselineAddr);
}

// 2b. The same CALLABLES callables every cycle: the old design keeps the chip buffers.
const sameCycles = Math.min(CYCLES, 1000);
console.log(`\n2b) churn: ${fmt(sameCycles)} cycles x the same ${CALLABLES} callables`);
const sameBatch = templates.map((t, i) => stamp(t, 0, i));
for (const design of designs) {
  const device = new SimDevice({ capacity: CAPACITY });
  const runner = makeDesign(design, device);
  const t0 = process.hrtime.bigint();
  let uploaded = 0;
  for (let cycle = 0; cycle < sameCycles; cycle++) {
    for (let i = 0; i < CALLABLES; i++)
      uploaded += runner.register(i % 64, sameBatch[i] as Uint8Array);
    for (let i = 0; i < CALLABLES; i++) runner.unregister(i % 64);
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(
    `   ${design.padEnd(12)} ${fmt(Math.round((sameCycles * CALLABLES) / seconds))} register+unregister pairs/s, ${mib(uploaded)} uploaded, live buffers after unregistering all ${runner.liveBuffers()}, committed ${mib(device.stats().committedBytes)}`,
  );
  runner.finalize();
}

// 3. Interleaved churn of mixed sizes over 64 ids on a small device: fragmentation.
const SMALL = 2 * 1024 * 1024;
console.log(
  `\n3) interleaved churn, 64 ids, mixed sizes, 50,000 ops (seeded), device ${mib(SMALL)}`,
);
const sized = Array.from({ length: 200 }, (_, i) => makeTemplate(syntheticOrch, i, 1 + (i % 9)));
for (const design of designs) {
  const device = new SimDevice({ capacity: SMALL });
  const runner = makeDesign(design, device);
  let seed = 12345;
  const rand = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  let failures = 0;
  let maxFrag = 0;
  for (let op = 0; op < 50_000; op++) {
    const cid = Math.floor(rand() * 64);
    if (runner.isRegistered(cid)) runner.unregister(cid);
    else {
      const t = sized[Math.floor(rand() * sized.length)] as Template;
      try {
        runner.register(cid, stamp(t, Math.floor(rand() * 400), cid));
      } catch {
        failures++;
      }
    }
    maxFrag = Math.max(maxFrag, device.stats().fragmentation);
  }
  const d = device.stats();
  console.log(
    `   ${design.padEnd(12)} live ${fmt(d.liveAllocations)} buffers, committed ${mib(d.committedBytes)}, peak ${mib(d.peakBytes)}, fragmentation now ${d.fragmentation.toFixed(3)} (max ${maxFrag.toFixed(3)}), free blocks ${fmt(d.freeBlocks)}, failed registrations ${failures}`,
  );
  runner.finalize();
}

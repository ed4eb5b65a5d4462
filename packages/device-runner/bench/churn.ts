// Register/unregister churn, both memory designs side by side in one run.
// Usage: pnpm --filter @memlayer/device-runner bench [-- --cycles=10000 --callables=50]
import { SimDevice } from '../src/index.js';
import {
  churn,
  compiledOrch,
  syntheticOrch as makeSyntheticOrch,
  makeTemplate,
  measureUploads,
  stamp,
  type Template,
} from './churn-section.js';
import { DESIGNS as designs, makeDesign } from './designs.js';

function arg(name: string, fallback: number): number {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.split('=')[1]) : fallback;
}
const CYCLES = arg('cycles', 10_000);
const CALLABLES = arg('callables', 50);
const CAPACITY = arg('capacity-mib', 256) * 1024 * 1024;

const syntheticOrch = makeSyntheticOrch();
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
  const distinct = Array.from({ length: CALLABLES }, (_, i) => makeTemplate(orch, i, 4));
  for (const design of designs) {
    const runner = makeDesign(design, new SimDevice({ capacity: CAPACITY }));
    const { uploaded, total } = measureUploads(runner, distinct, CALLABLES);
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
  const r = churn(device, runner, templates, CYCLES, [1, 10, 100, 1000, CYCLES]);
  const checkpoints = [...r.committedAt].map(([cycle, bytes]) => `c${fmt(cycle)}=${mib(bytes)}`);
  const d = device.stats();
  console.log(`   ${design}`);
  console.log(
    `     register   ${fmt(Math.round(r.registrations / r.registerSeconds))} ops/s   unregister ${fmt(Math.round(r.registrations / r.unregisterSeconds))} ops/s`,
  );
  console.log(
    `     committed above baseline: ${checkpoints.join('  ')}${r.stoppedAt ? `  — stopped: ${r.stoppedAt}` : ''}`,
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

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildChipCallable,
  DeviceRunner,
  parseChipCallable,
  readGnuBuildId,
  SimDevice,
  writeSharedObject,
} from '@memlayer/device-runner';
import { MiB, nowMs } from './measure.js';
import type { BenchOptions, Figure, SectionBody } from './types.js';

const CAPACITY = 256 * MiB;
const KERNELS = 4;

interface Template {
  bytes: Uint8Array;
  buildIdAt: number;
  kernelAt: number;
}

/** A real orchestration object from the system compiler when there is one, else a minimal ELF. */
function orchestration(dir: string): { bytes: Uint8Array; kind: string } {
  try {
    mkdirSync(dir, { recursive: true });
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
    const bytes = new Uint8Array(readFileSync(join(dir, 'orch.so')));
    return { bytes, kind: `a cc-built orchestration .so of ${bytes.length} bytes` };
  } catch {
    const bytes = writeSharedObject({
      symbols: [{ name: 'aicpu_orchestration_entry' }, { name: 'aicpu_orchestration_config' }],
      buildId: new Uint8Array(20).fill(0x11),
    });
    return { bytes, kind: `a minimal ELF orchestration of ${bytes.length} bytes (no cc)` };
  }
}

function makeTemplate(orch: Uint8Array, index: number): Template {
  const bytes = buildChipCallable({
    orch,
    children: Array.from({ length: KERNELS }, (_, k) => ({
      funcId: k,
      core: {
        signature: [1, 2],
        binary: new Uint8Array(512 + 64 * ((index + k) % 7)).fill(index & 0xff),
      },
    })),
  });
  const parsed = parseChipCallable(bytes);
  const id = readGnuBuildId(orch) as Uint8Array;
  return {
    bytes,
    buildIdAt: parsed.headerSize + Buffer.from(orch).indexOf(Buffer.from(id)),
    kernelAt: (parsed.children[0]?.imageOffset ?? 0) + 192,
  };
}

/** A copy with new content (build id and first kernel word), so every registration uploads. */
function stamp(template: Template, generation: number, index: number): Uint8Array {
  const bytes = template.bytes.slice();
  const view = new DataView(bytes.buffer);
  view.setUint32(template.buildIdAt, generation, true);
  view.setUint32(template.buildIdAt + 4, index, true);
  view.setUint32(template.kernelAt, generation, true);
  return bytes;
}

interface Churn {
  stoppedAt: string | null;
  registrations: number;
  committedAtEnd: number;
  peakAboveBaseline: number;
  registerPerSecond: number;
}

function churn(templates: Template[], cycles: number): Churn {
  const device = new SimDevice({ capacity: CAPACITY });
  const runner = new DeviceRunner({ device });
  const baseline = device.stats().committedBytes;
  let stoppedAt: string | null = null;
  let registrations = 0;
  let peak = 0;
  let registerMs = 0;
  for (let cycle = 1; cycle <= cycles && stoppedAt === null; cycle++) {
    const batch = templates.map((template, i) => stamp(template, cycle, i));
    const start = nowMs();
    for (const [i, bytes] of batch.entries()) {
      try {
        runner.registerCallable(i, bytes);
        registrations++;
      } catch (error) {
        stoppedAt = `${(error as { code?: string }).code ?? 'error'} at cycle ${cycle}`;
        break;
      }
    }
    registerMs += nowMs() - start;
    peak = Math.max(peak, device.stats().committedBytes - baseline);
    for (let i = 0; i < templates.length; i++) runner.unregisterCallable(i);
  }
  const committedAtEnd = device.stats().committedBytes - baseline;
  runner.finalize();
  return {
    stoppedAt,
    registrations,
    committedAtEnd,
    peakAboveBaseline: peak,
    registerPerSecond: registrations / (registerMs / 1000),
  };
}

export async function deviceSection(options: BenchOptions): Promise<SectionBody> {
  const callables = 4;
  const cycles = options.quick ? 500 : 10_000;
  const orch = orchestration(join(options.workDir, 'orch'));
  const templates = Array.from({ length: callables }, (_, i) => makeTemplate(orch.bytes, i));
  const figures: Figure[] = [];

  options.progress('device: bytes uploaded per registration');
  const registrationsForUpload = 50;
  const runner = new DeviceRunner({ device: new SimDevice({ capacity: CAPACITY }) });
  let uploaded = 0;
  let total = 0;
  for (let i = 0; i < registrationsForUpload; i++) {
    const bytes = stamp(templates[i % callables] as Template, 1, i);
    uploaded += runner.registerCallable(i % 64, bytes).bytesUploaded;
    total += bytes.length;
    runner.unregisterCallable(i % 64);
  }
  runner.finalize();
  figures.push({
    label: 'device bytes uploaded per registration',
    value: uploaded / registrationsForUpload,
    unit: `bytes (${(uploaded / total).toFixed(3)}x total_size)`,
    method: `registerCallable(...).bytesUploaded summed over ${registrationsForUpload} distinct ChipCallables (${KERNELS} kernels of 512-896 bytes, ${orch.kind}), divided by the count`,
  });

  options.progress(`device: ${cycles} churn cycles`);
  const r = churn(templates, cycles);
  const churnMethod = `${cycles} cycles, each registering ${callables} never-seen callables then unregistering them, SimDevice of ${CAPACITY / MiB} MiB; committed bytes from SimDevice.stats() above the empty device`;
  figures.push(
    {
      label: 'committed after the churn',
      value: r.committedAtEnd / MiB,
      unit: 'MiB',
      method: `${churnMethod}${r.stoppedAt ? `; stopped: ${r.stoppedAt}` : ''}`,
    },
    {
      label: 'peak committed during the churn',
      value: r.peakAboveBaseline / MiB,
      unit: 'MiB',
      method: churnMethod,
    },
    {
      label: 'registrations completed',
      value: r.registrations,
      unit: `of ${cycles * callables}`,
      method: churnMethod,
    },
    {
      label: 'register rate',
      value: r.registerPerSecond,
      unit: 'registrations/s',
      method: 'time spent in registerCallable during the churn',
    },
  );
  return {
    figures,
    comparisons: [],
    notes: [
      'The comparison with the design before simpler PR #1295 (orch uploaded twice, chip buffers kept until finalize) lives in the package benchmark: `pnpm --filter @memlayer/device-runner bench`.',
    ],
  };
}

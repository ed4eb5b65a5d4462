import { DeviceRunner, SimDevice } from '@memlayer/device-runner';
import {
  type ChurnRunner,
  churn,
  compiledOrch,
  makeTemplate,
  measureUploads,
  syntheticOrch,
} from '@memlayer/device-runner/bench/churn';
import { MiB } from './measure.js';
import type { BenchOptions, Figure, SectionBody } from './types.js';

const CAPACITY = 256 * MiB;
const KERNELS = 4;

/** The current design behind the package benchmark's runner interface. */
function churnRunner(runner: DeviceRunner): ChurnRunner {
  return {
    register: (cid, bytes) => runner.registerCallable(cid, bytes).bytesUploaded,
    unregister: (cid) => void runner.unregisterCallable(cid),
  };
}

/** A real orchestration object from the system compiler when there is one, else a minimal ELF. */
function orchestration(): { bytes: Uint8Array; kind: string } {
  const compiled = compiledOrch();
  if (compiled)
    return { bytes: compiled, kind: `a cc-built orchestration .so of ${compiled.length} bytes` };
  const bytes = syntheticOrch();
  return { bytes, kind: `a minimal ELF orchestration of ${bytes.length} bytes (no cc)` };
}

export async function deviceSection(options: BenchOptions): Promise<SectionBody> {
  const callables = 4;
  const cycles = options.quick ? 500 : 10_000;
  const orch = orchestration();
  const templates = Array.from({ length: callables }, (_, i) =>
    makeTemplate(orch.bytes, i, KERNELS),
  );
  const figures: Figure[] = [];

  options.progress('device: bytes uploaded per registration');
  const registrationsForUpload = 50;
  const runner = new DeviceRunner({ device: new SimDevice({ capacity: CAPACITY }) });
  const { uploaded, total } = measureUploads(
    churnRunner(runner),
    templates,
    registrationsForUpload,
  );
  runner.finalize();
  figures.push({
    label: 'device bytes uploaded per registration',
    value: uploaded / registrationsForUpload,
    unit: `bytes (${(uploaded / total).toFixed(3)}x total_size)`,
    method: `registerCallable(...).bytesUploaded summed over ${registrationsForUpload} distinct ChipCallables (${KERNELS} kernels of 512-896 bytes, ${orch.kind}), divided by the count`,
  });

  options.progress(`device: ${cycles} churn cycles`);
  const device = new SimDevice({ capacity: CAPACITY });
  const churnedRunner = new DeviceRunner({ device });
  const r = churn(device, churnRunner(churnedRunner), templates, cycles);
  churnedRunner.finalize();
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
      value: r.registrations / r.registerSeconds,
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

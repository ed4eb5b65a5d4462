// The register/unregister churn measurement, one copy: this package's `pnpm bench`
// (churn.ts) prints it for both memory designs, the private @memlayer/bench suite turns it
// into report figures. Imported by package name so the suite runs it against the build;
// the "./bench/churn" export is left out of publishConfig and the tarball (dist/bench).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildChipCallable,
  parseChipCallable,
  readGnuBuildId,
  type SimDevice,
  writeSharedObject,
} from '@memlayer/device-runner';

/** What the churn drives: the current DeviceRunner or the pre-#1295 design. */
export interface ChurnRunner {
  /** Registers on the device path; returns the device bytes this registration uploaded. */
  register(cid: number, bytes: Uint8Array): number;
  unregister(cid: number): void;
}

export interface Template {
  bytes: Uint8Array;
  /** Offsets to stamp per generation so every registration is new content (incl. build id). */
  buildIdAt: number;
  kernelAt: number;
}

/** A real orchestration object from the system compiler when there is one, else null. */
export function compiledOrch(): Uint8Array | null {
  const dir = mkdtempSync(join(tmpdir(), 'device-runner-bench-'));
  try {
    writeFileSync(
      join(dir, 'orch.c'),
      'int aicpu_orchestration_entry(void *a, int n) { return n; }\nint aicpu_orchestration_config(void) { return 1; }\n',
    );
    execFileSync(
      'cc',
      ['-shared', '-fPIC', '-Wl,--build-id', '-o', join(dir, 'orch.so'), join(dir, 'orch.c')],
      { stdio: 'ignore' },
    );
    return new Uint8Array(readFileSync(join(dir, 'orch.so')));
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A minimal ELF orchestration object (no C toolchain needed). */
export function syntheticOrch(): Uint8Array {
  return writeSharedObject({
    symbols: [{ name: 'aicpu_orchestration_entry' }, { name: 'aicpu_orchestration_config' }],
    buildId: new Uint8Array(20).fill(0x11),
  });
}

/** A ChipCallable of `kernels` kernels of 512-896 bytes around `orch`. */
export function makeTemplate(orch: Uint8Array, index: number, kernels: number): Template {
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

/** A copy with new content (build id and first kernel word), so every registration uploads. */
export function stamp(template: Template, generation: number, index: number): Uint8Array {
  const bytes = template.bytes.slice();
  const view = new DataView(bytes.buffer);
  view.setUint32(template.buildIdAt, generation, true);
  view.setUint32(template.buildIdAt + 4, index, true);
  view.setUint32(template.kernelAt, generation, true);
  return bytes;
}

/**
 * Device bytes uploaded by `registrations` registrations of distinct callables (template
 * i % templates.length, stamped), each unregistered again, and their total_size.
 */
export function measureUploads(
  runner: ChurnRunner,
  templates: readonly Template[],
  registrations: number,
): { uploaded: number; total: number } {
  let uploaded = 0;
  let total = 0;
  for (let i = 0; i < registrations; i++) {
    const bytes = stamp(templates[i % templates.length] as Template, 1, i);
    uploaded += runner.register(i % 64, bytes);
    total += bytes.length;
    runner.unregister(i % 64);
  }
  return { uploaded, total };
}

export interface ChurnResult {
  registrations: number;
  /** The error code and cycle that ended the churn early, or null. */
  stoppedAt: string | null;
  registerSeconds: number;
  unregisterSeconds: number;
  /** Bytes committed above the device's state at the start, at the end and at its peak. */
  committedAtEnd: number;
  peakAboveBaseline: number;
  /** Committed bytes above the start after each cycle listed in `checkpoints`. */
  committedAt: Map<number, number>;
}

/**
 * `cycles` cycles, each registering every template (stamped with the cycle, so the content
 * is never seen before) under ids 0..63, then unregistering them.
 */
export function churn(
  device: SimDevice,
  runner: ChurnRunner,
  templates: readonly Template[],
  cycles: number,
  checkpoints: readonly number[] = [],
): ChurnResult {
  const baseline = device.stats().committedBytes;
  const committedAt = new Map<number, number>();
  let registerNs = 0n;
  let unregisterNs = 0n;
  let registrations = 0;
  let stoppedAt: string | null = null;
  for (let cycle = 1; cycle <= cycles && stoppedAt === null; cycle++) {
    const batch = templates.map((template, i) => stamp(template, cycle, i));
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < batch.length; i++) {
      try {
        runner.register(i % 64, batch[i] as Uint8Array);
      } catch (error) {
        stoppedAt = `${(error as { code?: string }).code ?? 'error'} at cycle ${cycle}`;
        break;
      }
      registrations++;
    }
    const t1 = process.hrtime.bigint();
    for (let i = 0; i < batch.length; i++) runner.unregister(i % 64);
    unregisterNs += process.hrtime.bigint() - t1;
    registerNs += t1 - t0;
    if (checkpoints.includes(cycle)) {
      committedAt.set(cycle, device.stats().committedBytes - baseline);
    }
  }
  const end = device.stats();
  return {
    registrations,
    stoppedAt,
    registerSeconds: Number(registerNs) / 1e9,
    unregisterSeconds: Number(unregisterNs) / 1e9,
    committedAtEnd: end.committedBytes - baseline,
    peakAboveBaseline: end.peakBytes - baseline,
    committedAt,
  };
}

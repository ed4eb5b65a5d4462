import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { buildChipCallable, DeviceRunner, orchestrationObject } from '@memlayer/device-runner';
import {
  BackendOptions,
  createDefaultRegistry,
  LoadBackendOptionsMap,
  Module,
} from '@memlayer/module-loader';
import { packingStats, XNNWeightsCacheManager } from '@memlayer/xnnpack-cache';
import { CliError } from '../cli-error.js';
import type { RunReport } from '../run-program.js';
import { selfCommand } from '../self-command.js';

/**
 * Runs `memlayer run … --json` in a fresh process, so nothing is shared but the files.
 * Aborting `signal` stops the child (SIGTERM) and rejects.
 */
export function runInFreshProcess(
  programPath: string,
  cachePath: string,
  batch: number,
  signal: AbortSignal,
): Promise<RunReport> {
  const self = selfCommand();
  const args = [
    ...self.args,
    'run',
    programPath,
    '--cache',
    cachePath,
    '--method',
    'forward',
    '--batch',
    String(batch),
    '--json',
  ];
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const child = spawn(self.command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    const stop = () => child.kill('SIGTERM');
    signal.addEventListener('abort', stop, { once: true });
    child.on('error', (error) => {
      signal.removeEventListener('abort', stop);
      reject(error);
    });
    child.on('close', (status, killedBy) => {
      signal.removeEventListener('abort', stop);
      if (signal.aborted) return reject(signal.reason);
      if (status !== 0) {
        const why = killedBy ? `killed by ${killedBy}` : `exit ${status}`;
        return reject(
          new CliError(
            `demo: the child run failed (${why}): ${Buffer.concat(stderr).toString('utf8').trim()}`,
          ),
        );
      }
      resolve(JSON.parse(Buffer.concat(stdout).toString('utf8')) as RunReport);
    });
  });
}

export interface ReloadFigures {
  cycles: number;
  fileSizes: number[];
  packs: number;
}

/** Loads and unloads the model `cycles` times in this process, recording the cache file size. */
export function reloadCycles(
  programPath: string,
  cachePath: string,
  cycles: number,
): ReloadFigures {
  const manager = new XNNWeightsCacheManager();
  const registry = createDefaultRegistry({ xnnpack: { caches: manager } });
  const options = new LoadBackendOptionsMap().setOptions(
    'XnnpackBackend',
    new BackendOptions()
      .setOption('packed_cache_path', cachePath)
      .setOption('save_weight_cache_on_disk', true),
  );
  const fileSizes: number[] = [];
  const before = packingStats().calls;
  for (let cycle = 0; cycle < cycles; cycle++) {
    const module = new Module(programPath, { registry });
    module.load(options);
    module.loadMethod('forward');
    module.dispose();
    fileSizes.push(statSync(cachePath).size);
  }
  return { cycles, fileSizes, packs: packingStats().calls - before };
}

export interface ChurnFigures {
  cycles: number;
  callableBytes: number;
  bytesUploadedPerRegistration: number;
  baselineBytes: number;
  peakBytes: number;
  afterBytes: number;
  /** Distinct callables registered and unregistered many times: nothing may stay committed. */
  distinct: {
    callables: number;
    cycles: number;
    refcountedAfter: number;
    refcountedUploadRatio: number;
  };
}

/** The simulated Ascend device: a Module loads/unloads the "npu" method; then a churn of distinct callables. */
export function ascendChurn(programPath: string, cycles: number): ChurnFigures {
  const runner = new DeviceRunner();
  const registry = createDefaultRegistry({ ascend: { runner } });
  const baselineBytes = runner.stats().committedBytes;
  let peakBytes = baselineBytes;
  let uploaded = 0;
  let callableBytes = 0;
  for (let cycle = 0; cycle < cycles; cycle++) {
    const module = new Module(programPath, { registry });
    module.load();
    module.loadMethod('npu');
    const handle = module.methodHandle('npu') as {
      bytesUploaded: number;
      callable: { totalSize: number };
    };
    uploaded += handle.bytesUploaded;
    callableBytes = handle.callable.totalSize;
    peakBytes = Math.max(peakBytes, runner.stats().committedBytes);
    module.dispose();
  }
  const distinct = { callables: 20, cycles: 25 };
  const after = () => {
    const designRunner = new DeviceRunner();
    const callables = Array.from({ length: distinct.callables }, (_, tag) =>
      buildChipCallable({
        orch: orchestrationObject(tag + 1),
        children: [{ funcId: 0, core: { binary: new Uint8Array(4096).fill(tag) } }],
      }),
    );
    // Upload ratio of the first registration of each callable (later ones may hit a kept buffer).
    let firstUploads = 0;
    let firstTotal = 0;
    for (let cycle = 0; cycle < distinct.cycles; cycle++) {
      callables.forEach((callable, cid) => {
        const { bytesUploaded } = designRunner.registerCallable(cid, callable);
        if (cycle === 0) {
          firstUploads += bytesUploaded;
          firstTotal += callable.byteLength;
        }
      });
      for (let cid = 0; cid < callables.length; cid++) designRunner.unregisterCallable(cid);
    }
    return {
      committed: designRunner.stats().committedBytes,
      uploadRatio: firstUploads / firstTotal,
    };
  };
  const refcounted = after();
  return {
    cycles,
    callableBytes,
    bytesUploadedPerRegistration: uploaded / cycles,
    baselineBytes,
    peakBytes,
    afterBytes: runner.stats().committedBytes,
    distinct: {
      ...distinct,
      refcountedAfter: refcounted.committed,
      refcountedUploadRatio: refcounted.uploadRatio,
    },
  };
}

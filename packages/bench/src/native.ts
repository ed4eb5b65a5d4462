import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PackResult } from './child-protocol.js';
import { runInChild } from './children.js';
import { coldWarmRuns, measureColdWarm } from './cold-warm.js';
import { median, minOf } from './measure.js';
import { coldWarmModels } from './sizes.js';
import {
  type BenchOptions,
  type Comparison,
  compare,
  type Figure,
  type ModelSpec,
  type SectionBody,
  weightBytesOf,
} from './types.js';

/** The C reference program (../native/fc_create.c from both src/ and dist/). */
const NATIVE_SOURCE = fileURLToPath(new URL('../native/fc_create.c', import.meta.url));

/** Link flags tried in order: the shared library pulls its own deps; a static one needs them. */
const LINK_ATTEMPTS = [
  ['-lXNNPACK'],
  ['-lXNNPACK', '-lpthreadpool', '-lcpuinfo', '-lclog', '-lpthread', '-lm'],
];

/** Compiles the reference program, or returns why it cannot be built here. */
export function buildNative(
  dir: string,
): { binary: string; flags: string[] } | { missing: string } {
  mkdirSync(dir, { recursive: true });
  const source = NATIVE_SOURCE;
  // Debian's xnnpack.h includes <pthreadpool.h>, which libxnnpack-dev does not ship: a
  // one-line declaration searched after the system folders stands in when it is absent.
  writeFileSync(join(dir, 'pthreadpool.h'), 'typedef struct pthreadpool* pthreadpool_t;\n');
  if (!existsSync('/usr/include/xnnpack.h')) {
    return {
      missing: 'xnnpack.h not found: install libxnnpack-dev (apt-get install -y libxnnpack-dev)',
    };
  }
  const binary = join(dir, 'fc_create');
  let lastError = '';
  for (const flags of LINK_ATTEMPTS) {
    try {
      execFileSync('cc', ['-O2', '-idirafter', dir, source, '-o', binary, ...flags], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      return { binary, flags };
    } catch (error) {
      const err = error as NodeJS.ErrnoException & { stderr?: Buffer };
      if (err.code === 'ENOENT') return { missing: 'no C compiler (`cc`) on PATH' };
      lastError = err.stderr?.toString().trim().split('\n').slice(-2).join(' ') ?? err.message;
    }
  }
  return { missing: `could not compile against libXNNPACK: ${lastError}` };
}

const gbps = (bytes: number, ms: number) => bytes / 1e9 / (ms / 1000);

/** Models of at most this many weight bytes are packed in several process pairs. */
const REPEATED_PACK_BYTES = 1.2 * 1024 ** 3;

/** Process pairs per model: the > 4 GiB model takes C ~15 s a round, so it runs once. */
function packProcessesFor(spec: ModelSpec, quick: boolean): number {
  if (quick) return 1;
  return weightBytesOf(spec) <= REPEATED_PACK_BYTES ? 3 : 1;
}

/**
 * Rounds per process: each round's packed copy stays on the heap until a collection frees
 * it, so a second round of the > 4 GiB model, beside its weights and the first round's
 * copy, took the child to 18.7 GB and the kernel killed it on a 24 GiB machine.
 */
function packRoundsFor(spec: ModelSpec, quick: boolean): number {
  if (quick) return 2;
  return weightBytesOf(spec) <= REPEATED_PACK_BYTES ? 3 : 1;
}

function roundsPhrase(rounds: number): string {
  return rounds === 1 ? 'one round' : `first of ${rounds} rounds`;
}

function processesPhrase(processes: number, other: string): string {
  return processes === 1
    ? 'one process'
    : `median of ${processes} fresh processes alternated with ${other}`;
}

/** One run of the C reference program: create time of every round, in ms. */
export function runNative(binary: string, spec: ModelSpec, rounds: number): number[] {
  const output = execFileSync(binary, [String(spec.layers), String(spec.dim), String(rounds)], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  const lines = output.trim().split('\n');
  if (lines.length > 1) throw new Error(`native reference failed: ${lines.slice(1).join(' ')}`);
  return (JSON.parse(lines[0] as string) as { roundsMs: number[] }).roundsMs;
}

export async function nativeSection(options: BenchOptions): Promise<SectionBody> {
  const built = buildNative(join(options.workDir, 'native'));
  if ('missing' in built) {
    return { status: 'skipped', reason: built.missing, figures: [], comparisons: [], notes: [] };
  }
  const figures: Figure[] = [];
  const comparisons: Comparison[] = [];
  const specs = coldWarmModels(options.quick);
  for (const [index, spec] of specs.entries()) {
    options.progress(`${spec.label}: XNNPACK C create vs memlayer packing`);
    // Fresh processes of each side, alternated: one pair of processes moves by up to 3x on
    // a shared machine, so the comparison takes the median first round of several.
    const processes = packProcessesFor(spec, options.quick);
    const rounds = packRoundsFor(spec, options.quick);
    const nativeFirsts: number[] = [];
    const oursFirsts: number[] = [];
    const nativeRounds: number[] = [];
    const oursRounds: number[] = [];
    for (let run = 0; run < processes; run++) {
      const native = runNative(built.binary, spec, rounds);
      const ours = await runInChild<PackResult>({
        kind: 'pack',
        layers: spec.layers,
        dim: spec.dim,
        rounds,
      });
      nativeFirsts.push(native[0] ?? Number.NaN);
      oursFirsts.push(ours.roundsMs[0] ?? Number.NaN);
      nativeRounds.push(...native);
      oursRounds.push(...ours.roundsMs);
    }
    const cw = await measureColdWarm(options, spec, coldWarmRuns(options.quick, spec));
    const bytes = weightBytesOf(spec);
    const nativeFirst = median(nativeFirsts);
    const oursFirst = median(oursFirsts);
    const size = `${spec.label} (${spec.layers} x ${spec.dim}x${spec.dim})`;
    const nativeMethod = `xnn_create_fully_connected_nc_f32 for every layer in a C program (cc -O2, ${built.flags.join(' ')}), weights already in memory; ${roundsPhrase(rounds)} (operators deleted between rounds), ${processesPhrase(processes, "memlayer's")}`;
    const oursMethod = `createFullyConnectedNcF32 for every layer through a fresh heap XNNWeightsCache (reserve, zero-fill, pack) in a child process, weights already in memory; ${roundsPhrase(rounds)}, ${processesPhrase(processes, "C's")}`;
    figures.push(
      {
        label: `${size}: XNNPACK C create, all layers`,
        value: nativeFirst,
        unit: 'ms',
        method: nativeMethod,
      },
      {
        label: `${size}: XNNPACK C packing throughput`,
        value: gbps(bytes, nativeFirst),
        unit: 'GB/s',
        method: `unpacked f32 bytes (weights + biases) / create time; best round: ${gbps(bytes, minOf(nativeRounds)).toFixed(2)} GB/s`,
      },
      {
        label: `${size}: memlayer packing throughput`,
        value: gbps(bytes, oursFirst),
        unit: 'GB/s',
        method: `${oursMethod}; unpacked bytes / time; best round: ${gbps(bytes, minOf(oursRounds)).toFixed(2)} GB/s`,
      },
      {
        label: `${size}: memlayer cold start throughput (file-backed)`,
        value: gbps(bytes, cw.coldMethodMs),
        unit: 'GB/s',
        method:
          'unpacked bytes / loadMethod time of the cold start of section 1 (packing + file growth + msync + index save)',
      },
      {
        label: `${size}: memlayer warm start`,
        value: cw.warmMs,
        unit: 'ms',
        method:
          'time to runnable method of the warm start, section 1 (fresh process, cache file present)',
      },
    );
    const main = index === specs.length - 1;
    comparisons.push(
      compare({
        label: `warm start vs XNNPACK C create, ${spec.label}`,
        ours: { name: 'memlayer warm start', value: cw.warmMs },
        peer: { name: 'XNNPACK C create (packs)', value: nativeFirst },
        unit: 'ms',
        higherIsBetter: false,
        method: 'warm time to runnable method (section 1) vs first-round C create time, same run',
        main,
      }),
      compare({
        label: `packing throughput vs XNNPACK C, ${spec.label}`,
        ours: { name: 'memlayer (TypeScript)', value: gbps(bytes, oursFirst) },
        peer: { name: 'XNNPACK (C)', value: gbps(bytes, nativeFirst) },
        unit: 'GB/s',
        higherIsBetter: true,
        method: `${oursMethod} vs ${nativeMethod}`,
        // Every size is charted, so the sizes where C packs faster show too.
        main: true,
      }),
    );
  }
  return {
    figures,
    comparisons,
    notes: [
      'XNNPACK chooses its own f32 GEMM microkernel (and tiling) for this CPU; memlayer packs for nr=8 kr=1 sr=1. Both write the same amount of data per weight (packed size within a few percent).',
      'Debian libxnnpack-dev is XNNPACK from February 2022; it has no weights cache, so every load packs again.',
    ],
  };
}

// One crash trial: a child packs and saves build after build into a shared cache file and
// is killed with SIGKILL at a random moment; then the file must load as the last or the
// in-flight commit with every data CRC valid (or as nothing committed yet), and every
// loaded entry must give bit-identical outputs. Used by the tests and scripts/crash-trials.ts.
import { existsSync, readFileSync } from 'node:fs';
import {
  isXpwcFormatError,
  readTrailer,
  verifyEntryData,
  type XpwcEntryV3,
} from '@memlayer/cache-format';
import { packingStats, resetPackingStats, XNNWeightsCache } from '../src/index.js';
import { startCacheChild } from './child.js';
import { referenceHashes } from './file-helpers.js';
import { buildModel, type ModelSpec, outputHashes, range } from './fixtures/model.js';

export const CRASH_MODEL = { inputChannels: 128, outputChannels: 128 } as const;
export const BUILDS_PER_TRIAL = 6;
export const LAYERS_PER_BUILD = 4;

export type CrashOutcome = 'last-commit' | 'in-flight-commit' | 'nothing-committed' | 'completed';

export interface CrashTrialResult {
  readonly outcome: CrashOutcome;
  /** Newest generation committed before the kill (the file's before the trial, or the child's). */
  readonly reportedGeneration: number;
  /** Generation the file loads as (0: no commit). */
  readonly loadedGeneration: number;
  readonly entries: number;
  /** Problems found; empty when the trial passed. */
  readonly failures: string[];
}

const referenceCache = new Map<number, string>();

function referenceOf(layers: readonly number[]): string[] {
  const missing = layers.filter((l) => !referenceCache.has(l));
  if (missing.length > 0) {
    const hashes = referenceHashes({ ...CRASH_MODEL, layers: missing });
    missing.forEach((l, i) => {
      referenceCache.set(l, hashes[i] as string);
    });
  }
  return layers.map((l) => referenceCache.get(l) as string);
}

function committedGeneration(path: string): number {
  if (!existsSync(path)) return 0;
  const bytes = new Uint8Array(readFileSync(path));
  try {
    return readTrailer(bytes, bytes.byteLength).commit?.slot.generation ?? 0;
  } catch {
    return 0;
  }
}

const layerOf = (name: string) => Number(/^layer(\d+)\.weight/.exec(name)?.[1] ?? Number.NaN);

/**
 * Runs trial `trial` against `path` (a file shared by all trials: each trial adds its own
 * layers, so the file accumulates history, dead tails and torn trailers).
 */
export async function crashTrial(
  path: string,
  trial: number,
  killAfterMs: number,
  backend: 'posix' | 'heap' = 'posix',
): Promise<CrashTrialResult> {
  const first = trial * BUILDS_PER_TRIAL * LAYERS_PER_BUILD;
  const builds = range(0, BUILDS_PER_TRIAL).map((b) =>
    range(first + b * LAYERS_PER_BUILD, LAYERS_PER_BUILD),
  );
  const before = committedGeneration(path);
  // Every other build commits at once (flush); the others leave the commit deferred to the
  // next flush or to process exit, so kills land in both kinds of commit.
  const flushBuilds = range(0, BUILDS_PER_TRIAL).filter((b) => (b + trial) % 2 === 0);
  const child = startCacheChild({
    path,
    ...CRASH_MODEL,
    builds,
    flushBuilds,
    options: { backend },
  });
  await child.waitFor('ready');
  await new Promise((resolve) => setTimeout(resolve, killAfterMs));
  child.child.kill('SIGKILL');
  const result = await child.done;
  const reports = result.events.filter((e) => e['event'] === 'committed');
  const last = reports[reports.length - 1];
  const reported = Math.max(before, ...reports.map((e) => Number(e['generation'])));
  // Commits the child may have started since its last report: the one still running then
  // (finalize hands it to the thread pool) and the one of the build it was killed in.
  const unreported = last?.['pendingCommit'] === true ? 2 : 1;
  const failures: string[] = [];
  const completed = result.events.some((e) => e['event'] === 'done');
  if (!completed && result.signal !== 'SIGKILL') {
    failures.push(`child ended with code ${result.code}: ${result.stderr.slice(-500)}`);
  }

  // 1. The committed index, read independently of the cache, is whole and its CRCs hold.
  // Killed before its first open: no file at all.
  const bytes = existsSync(path) ? new Uint8Array(readFileSync(path)) : new Uint8Array(0);
  let loadedGeneration = 0;
  let entries: XpwcEntryV3[] = [];
  try {
    const { trailer, commit } = readTrailer(bytes, bytes.byteLength);
    loadedGeneration = commit?.slot.generation ?? 0;
    entries = trailer.entries as XpwcEntryV3[];
    for (const entry of entries) {
      try {
        verifyEntryData(entry, bytes.subarray(entry.fileOffset, entry.fileOffset + entry.dataSize));
      } catch {
        failures.push(`entry ${entry.name} of generation ${loadedGeneration} fails its CRC`);
      }
    }
  } catch (error) {
    if (!isXpwcFormatError(error)) throw error;
    // Acceptable only when nothing was ever committed (no file, a header alone, or a
    // header torn while being created: the cache rebuilds such a file).
    if (reported > 0) {
      failures.push(`file does not load after the crash: ${error.code} ${error.message}`);
    }
  }
  let outcome: CrashOutcome;
  if (completed) outcome = 'completed';
  else if (loadedGeneration === 0) outcome = 'nothing-committed';
  else if (loadedGeneration === reported) outcome = 'last-commit';
  else if (loadedGeneration > reported && loadedGeneration <= reported + unreported) {
    outcome = 'in-flight-commit';
  } else {
    outcome = 'last-commit';
    failures.push(`loads generation ${loadedGeneration}, child reported ${reported}`);
  }
  if (completed && loadedGeneration < reported) failures.push('completed run lost its last commit');

  // 2. The cache loads it (full verify) and every entry gives the reference outputs.
  const layers = entries.map((e) => layerOf(e.name)).filter((l) => Number.isInteger(l));
  if (layers.length > 0) {
    const spec: ModelSpec = { ...CRASH_MODEL, layers };
    resetPackingStats();
    const cache = new XNNWeightsCache({ path, verify: 'full', backend });
    try {
      const { ops } = buildModel(cache, spec);
      if (packingStats().calls !== 0)
        failures.push(`${packingStats().calls} committed entries were repacked`);
      const got = outputHashes(ops, spec.inputChannels);
      const want = referenceOf(layers);
      got.forEach((hash, i) => {
        if (hash !== want[i]) failures.push(`layer ${layers[i]} gives wrong outputs`);
      });
    } finally {
      cache.close();
    }
  }
  return {
    outcome,
    reportedGeneration: reported,
    loadedGeneration,
    entries: entries.length,
    failures,
  };
}

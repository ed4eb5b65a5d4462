import { resolve } from 'node:path';
import { saveSoon } from '../files/deferred-saves.js';
import { readMemoFile, replaceMemoFile } from '../files/memo-file.js';
import type { LoadedProgram } from '../program/program.js';
import { trustworthy } from '../safetensors/known-files.js';
import {
  decodePlan,
  decodePlans,
  encodePlan,
  encodePlanFile,
  MAX_METHOD_PLANS,
  type MethodPlan,
  planAddress,
} from './plan-codec.js';

/** A plans file larger than this is ignored unread (a plan only saves work: losing it is safe). */
export const MAX_METHOD_PLANS_BYTES = 64 * 1024 * 1024;
/** Warning code of a plans file that is unreadable, corrupt or could not be written. */
export const METHOD_PLAN_WARNING = 'MEMLAYER_METHOD_PLAN';

/** Path of the plans kept next to a cache file. */
export function methodPlansPath(cachePath: string): string {
  return `${resolve(cachePath)}.plans.json`;
}

/**
 * The method plans kept next to a cache file (`<cache>.plans.json`), one per program path
 * and method. Read on each recall (bounded; corrupt ⇒ ignored with a warning), written by
 * temp file + rename (readers see the old or the new file, whole); other processes' plans
 * written meanwhile are kept.
 */
export class MethodPlans {
  readonly path: string;

  constructor(cachePath: string) {
    this.path = methodPlansPath(cachePath);
  }

  /**
   * The plan of `method` of `program` when it still describes the same files: the manifest
   * has the identity it had (and had settled then, see trustworthy) or else its bytes have
   * the plan's digest, and every weight file has the identity it had (and had settled then).
   * Undefined otherwise; never throws.
   */
  recall(program: LoadedProgram, method: string): MethodPlan | undefined {
    const address = resolve(program.path);
    const raw = readPlans(this.path)?.find((plan) => sameAddress(plan, address, method));
    if (raw === undefined) return undefined;
    let plan: MethodPlan;
    try {
      plan = decodePlan(raw);
    } catch (error) {
      warn(
        `ignoring the plan of ${program.path} "${method}" in ${this.path}: ${(error as Error).message}`,
      );
      return undefined;
    }
    return fits(plan, program) ? plan : undefined;
  }

  /** Reports a plan that was trusted but did not describe the weights (the start went on without it). */
  rejected(program: LoadedProgram, method: string, error: Error): void {
    warn(
      `the plan of ${resolve(program.path)} "${method}" in ${this.path} was not used: ${error.message}`,
    );
  }

  /** save(plan) after the method is runnable (files/deferred-saves.ts). */
  saveLater(plan: MethodPlan): void {
    saveSoon(this.path, () => this.save(plan), warn);
  }

  /** Keeps `plan` (replacing the one of its program and method); false when not written. */
  save(plan: MethodPlan): boolean {
    const others = (readPlans(this.path) ?? []).filter(
      (raw) => !sameAddress(raw, plan.program, plan.method),
    );
    // The oldest plans go first; the others are written back as they were read.
    const kept = others.slice(Math.max(0, others.length - (MAX_METHOD_PLANS - 1)));
    const text = encodePlanFile([...kept, encodePlan(plan)]);
    const error = replaceMemoFile(this.path, text);
    if (error === undefined) return true;
    warn(`cannot write ${this.path} (${error.message}); the plan is not kept`);
    return false;
  }
}

/** Whether every file a plan names is the program's file, unchanged and settled. */
function fits(plan: MethodPlan, program: LoadedProgram): boolean {
  // The manifest as the plan saw it (same identity, settled then), else the same bytes: a
  // manifest copied or touched but not changed keeps its plan, at the cost of one hash.
  if (
    !trustworthy(plan.manifestFile, program.manifestFile.identity) &&
    plan.manifestDigest !== program.manifestDigest
  ) {
    return false;
  }
  const files = program.namedData.files;
  if (plan.weights.length !== files.length) return false;
  for (let i = 0; i < files.length; i++) {
    // trustworthy: the same identity, read after the file had settled.
    if (!trustworthy(plan.weights[i], (files[i] as (typeof files)[number]).identity)) return false;
  }
  return true;
}

function sameAddress(raw: unknown, program: string, method: string): boolean {
  const address = planAddress(raw);
  return address !== undefined && address.program === program && address.method === method;
}

/** The encoded plans of the file, or undefined when it is absent or corrupt (warned). */
function readPlans(path: string): unknown[] | undefined {
  return readMemoFile(path, MAX_METHOD_PLANS_BYTES, decodePlans, warn);
}

function warn(message: string): void {
  process.emitWarning(message, { code: METHOD_PLAN_WARNING });
}

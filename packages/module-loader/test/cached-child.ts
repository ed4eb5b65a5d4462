// Runs fixtures/run-cached.ts in a fresh process: a start with nothing in memory.
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { WeightStats } from '../src/index.js';

const CHILD = join(import.meta.dirname, 'fixtures', 'run-cached.ts');
const ARGS = ['--conditions=memlayer-source', '--import', 'tsx', CHILD];
const OPTIONS = {
  encoding: 'utf8',
  cwd: join(import.meta.dirname, '..'),
  timeout: 60_000,
} as const;

export interface ChildReport {
  output: string;
  packs: number;
  cacheHits: number;
  entries: number;
  names: string[];
  /** What loading the program alone cost (no method loaded). */
  afterLoad: WeightStats;
  /** What loading the program and its method cost. */
  stats: WeightStats;
  ascendCreated: boolean;
}

export function runChild(programPath: string, cachePath: string): ChildReport {
  const result = spawnSync(process.execPath, [...ARGS, programPath, cachePath], OPTIONS);
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as ChildReport;
}

/** runChild, without waiting: several children at once. */
export function runChildConcurrently(programPath: string, cachePath: string): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...ARGS, programPath, cachePath],
      OPTIONS,
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

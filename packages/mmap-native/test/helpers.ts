import { type SpawnOptions, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { BackendName } from '../src/backend.js';
import { tryLoadAddon } from '../src/backends/posix/addon.js';

export const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
export const fixture = (name: string) => join(packageDir, 'test', 'fixtures', name);

/** Whether the native addon is built and usable here (Linux/macOS). */
export const addonAvailable = (() => {
  try {
    const addon = tryLoadAddon();
    return addon?.supported === true && addon.externalBuffersAllowed();
  } catch {
    return false;
  }
})();

/**
 * Backends every behavioural suite runs on. Linux always includes posix: a missing or
 * broken addon there fails those tests with the load error instead of skipping them.
 */
export const posixExpected = process.platform === 'linux' || addonAvailable;
export const testedBackends: BackendName[] = posixExpected ? ['posix', 'heap'] : ['heap'];

export function makeTempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'mmap-native-test-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

// statfs f_type of tmpfs (linux/magic.h): it has no write-back, so msync cleans nothing.
const TMPFS_MAGIC = 0x01021994;

/**
 * A temporary directory on a file system with write-back: the system temp dir, or, where
 * that is tmpfs, one inside this package (on the repository's disk; git ignores it).
 */
export function diskTempDir(): { dir: string; cleanup: () => void } {
  if (statfsSync(tmpdir()).type !== TMPFS_MAGIC) return makeTempDir();
  const dir = mkdtempSync(join(packageDir, '.test-tmp-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript fixture in a fresh Node process (through tsx). */
export function nodeArgs(script: string, nodeFlags: string[] = []): string[] {
  return [...nodeFlags, '--import', 'tsx', script];
}

export function runChild(
  command: string,
  args: string[],
  options: SpawnOptions & { input?: string; timeoutMs?: number } = {},
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: packageDir, ...options, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    // Only a hung child is killed: on a loaded machine a sound one may take tens of seconds.
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 110_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

export function runNodeFixture(
  name: string,
  args: string[] = [],
  options: SpawnOptions & { nodeFlags?: string[]; input?: string; timeoutMs?: number } = {},
): Promise<ChildResult> {
  const { nodeFlags, ...rest } = options;
  return runChild(process.execPath, [...nodeArgs(fixture(name), nodeFlags), ...args], rest);
}

/** The last stdout line of a child, parsed as JSON. */
export function lastJson<T>(result: ChildResult): T {
  const lines = result.stdout.trim().split('\n');
  const last = lines[lines.length - 1];
  if (last === undefined || last === '') {
    throw new Error(`child printed nothing (exit ${result.code}): ${result.stderr}`);
  }
  return JSON.parse(last) as T;
}

/** Lines of /proc/self/maps that mention a path. */
export function mapsLinesFor(mapsText: string, path: string): string[] {
  return mapsText.split('\n').filter((line) => line.endsWith(path));
}

/**
 * A child process holding a flock on path until it gets a line on stdin (or, with
 * releaseAfterMs, that long after the line).
 */
export function startHolder(
  path: string,
  kind: string,
  backend: BackendName,
  releaseAfterMs?: number,
) {
  const args = [path, kind, backend];
  if (releaseAfterMs !== undefined) args.push(String(releaseAfterMs));
  const child = spawn(process.execPath, [...nodeArgs(fixture('flock-holder.ts')), ...args], {
    cwd: packageDir,
    stdio: 'pipe',
  });
  let output = '';
  const locked = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('locked')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`holder exited (${code}) before locking`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { child, locked, exited };
}

/** The error `fn` throws (with its `code`), or undefined when it returns. */
export function errorOf(fn: () => unknown): (Error & { code?: string }) | undefined {
  try {
    fn();
  } catch (error) {
    return error as Error & { code?: string };
  }
  return undefined;
}

/** Fails unless `fn` throws a TypeError or RangeError with this `code` (an argument error). */
export function expectArgumentError(fn: () => unknown, code: string): void {
  const error = errorOf(fn);
  expect(error, 'nothing thrown').toBeDefined();
  expect(error instanceof TypeError || error instanceof RangeError, String(error)).toBe(true);
  expect(error?.code).toBe(code);
}

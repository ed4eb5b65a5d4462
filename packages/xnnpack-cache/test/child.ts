import { type SpawnOptions, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildArgs, ChildReport } from './fixtures/cache-child.js';

export const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
export const childScript = join(packageDir, 'test', 'fixtures', 'cache-child.ts');

/** Node flags that run TypeScript sources of this package and its siblings. */
export const TS_NODE_FLAGS = ['--conditions=memlayer-source', '--import', 'tsx'];

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  events: Array<Record<string, unknown>>;
}

export interface RunningChild {
  readonly child: ReturnType<typeof spawn>;
  readonly done: Promise<ChildResult>;
  /** Resolves at the first stdout event with this name. */
  waitFor(event: string): Promise<void>;
  readonly events: Array<Record<string, unknown>>;
}

/** Starts `command args` (a cache child by default) and collects its JSON lines. */
export function startChild(
  command: string,
  args: string[],
  options: SpawnOptions & { timeoutMs?: number } = {},
): RunningChild {
  const child = spawn(command, args, { cwd: packageDir, ...options, stdio: 'pipe' });
  const events: Array<Record<string, unknown>> = [];
  const waiters: Array<{ event: string; resolve: () => void }> = [];
  let stdout = '';
  let stderr = '';
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk;
    partial += chunk;
    for (let nl = partial.indexOf('\n'); nl >= 0; nl = partial.indexOf('\n')) {
      const line = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      if (!line.startsWith('{')) continue;
      const event = JSON.parse(line) as Record<string, unknown>;
      events.push(event);
      for (const waiter of waiters.filter((w) => w.event === event['event'])) waiter.resolve();
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  const done = new Promise<ChildResult>((resolve, reject) => {
    // Only a hung child is killed: on a loaded machine a sound one may take tens of seconds.
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 110_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      for (const waiter of waiters) waiter.resolve();
      resolve({ code, signal, stdout, stderr, events });
    });
  });
  return {
    child,
    done,
    events,
    waitFor: (event) =>
      events.some((e) => e['event'] === event)
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ event, resolve })),
  };
}

export function startCacheChild(
  args: ChildArgs,
  options: SpawnOptions & { timeoutMs?: number; wrapper?: string[] } = {},
): RunningChild {
  const { wrapper, ...rest } = options;
  const nodeArgs = [...TS_NODE_FLAGS, childScript, JSON.stringify(args)];
  if (wrapper === undefined) return startChild(process.execPath, nodeArgs, rest);
  return startChild('sh', ['-c', ...wrapper, process.execPath, ...nodeArgs], rest);
}

/** The child's final report; throws with its stderr when it did not finish. */
export function reportOf(result: ChildResult): ChildReport {
  const done = result.events.find((e) => e['event'] === 'done');
  if (done === undefined) {
    throw new Error(
      `child did not finish (code ${result.code}, signal ${result.signal}):\n${result.stderr}`,
    );
  }
  return done as unknown as ChildReport;
}

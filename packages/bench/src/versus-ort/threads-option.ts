import { Module, type ModuleConfig } from '@memlayer/module-loader';

export interface ThreadsOption {
  readonly available: boolean;
  /** Why the option counts as absent (shown where the 2-thread figure would be). */
  readonly reason: string;
}

/** Module + load + loadMethod of `program` with `threads` in the Module config. */
function startWith(program: string, threads: unknown): void {
  // Through a variable: a config key this version of ModuleConfig may not declare.
  const config = { threads } as ModuleConfig;
  const module = new Module(program, config);
  try {
    module.load();
    module.loadMethod('forward');
  } finally {
    module.dispose();
  }
}

/**
 * Whether the installed module-loader takes a `threads` Module option. A loader that ignores
 * unknown config keys starts with any value, so the option counts only when a start with
 * threads: 2 succeeds and one with a value no thread count can be is refused.
 * `program`: a small JSON program with a `forward` method.
 */
export function probeThreadsOption(program: string): ThreadsOption {
  try {
    startWith(program, 2);
  } catch (error) {
    return { available: false, reason: `threads: 2 refused (${(error as Error).message})` };
  }
  for (const invalid of [-1, 1.5, 'two']) {
    try {
      startWith(program, invalid);
    } catch {
      return { available: true, reason: '' };
    }
  }
  return {
    available: false,
    reason: 'Module starts with a `threads` value of -1, 1.5 or "two" as with none',
  };
}

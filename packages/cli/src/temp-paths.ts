import { rmSync } from 'node:fs';

/**
 * Paths an invocation is writing and has not committed yet (temp files, a temp folder, a
 * partial output). They are removed when the command ends, whichever way it ends, and
 * by the SIGINT/SIGTERM handler, so an interrupted command leaves nothing behind.
 */
export class TempPaths {
  readonly #paths = new Set<string>();

  constructor() {
    live.add(this);
  }

  /** Tracks `path` until it is committed or removed; returns it. */
  track(path: string): string {
    this.#paths.add(path);
    return path;
  }

  /** The path became a real output (renamed into place): no longer removed. */
  commit(path: string): void {
    this.#paths.delete(path);
  }

  /** Removes every tracked path (files or folders); never throws. */
  removeAll(): void {
    for (const path of this.#paths) {
      try {
        rmSync(path, { recursive: true, force: true });
      } catch {
        // Best effort: a path that cannot be removed is left, never a second failure.
      }
    }
    this.#paths.clear();
  }

  /** The invocation is over: remove what is left and stop being reachable from signals. */
  dispose(): void {
    this.removeAll();
    live.delete(this);
  }
}

const live = new Set<TempPaths>();

/** What a signal handler calls: every running invocation's temp paths are removed. */
export function removeAllTempPaths(): void {
  for (const paths of live) paths.removeAll();
}

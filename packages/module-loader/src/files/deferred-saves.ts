// Files next to a cache that only spare work (the weight-sources record, the method plans)
// are saved after the method is runnable: on a later turn of the event loop, at process
// exit at the latest, and first thing when this process reads the same file again. A crash
// before then loses only what they would have spared (the next start reads the weights).

interface PendingSave {
  readonly save: () => void;
  /** Reports a save that threw (saves report their own write errors). */
  readonly warn: (message: string) => void;
}

const pending = new Map<string, PendingSave[]>();
let scheduled = false;
let exitHooked = false;

/** Queues `save` of the file at `path`, after the saves already queued for it. */
export function saveSoon(path: string, save: () => void, warn: (message: string) => void): void {
  const queue = pending.get(path);
  if (queue === undefined) pending.set(path, [{ save, warn }]);
  else queue.push({ save, warn });
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', savePendingMemoFiles);
  }
  if (!scheduled) {
    scheduled = true;
    // unref: a process with nothing else to do exits at once and saves in its exit hook.
    setTimeout(() => {
      scheduled = false;
      savePendingMemoFiles();
    }, 0).unref();
  }
}

/** Runs the queued saves of the file at `path` now (before it is read). */
export function savePendingNow(path: string): void {
  const queue = pending.get(path);
  if (queue === undefined) return;
  pending.delete(path);
  for (const { save, warn } of queue) {
    try {
      save();
    } catch (error) {
      warn(`cannot save ${path} (${(error as Error).message}); it is not kept`);
    }
  }
}

/**
 * Saves now every weight-sources record and method plan that loads of this process left
 * to save later (they are saved on a later turn of the event loop or at exit otherwise).
 */
export function savePendingMemoFiles(): void {
  for (const path of [...pending.keys()]) savePendingNow(path);
}

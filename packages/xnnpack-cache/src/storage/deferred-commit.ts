/**
 * The durable commit of a file storage (data sync, trailer, commit slot) runs off the
 * critical path: on the thread pool from finalize, at flush()/close(), or at the latest
 * in a process 'exit' handler, which may only do synchronous work (and must wait for a
 * commit still on the thread pool: exit ends those threads too).
 */
export interface DeferredCommitter {
  /**
   * Waits for a commit running in the background and commits whatever is still pending,
   * synchronously; never throws (it warns instead).
   */
  commitPendingNow(): void;
}

const pending = new Set<DeferredCommitter>();
let hooked = false;

function commitAllAtExit(): void {
  for (const committer of [...pending]) committer.commitPendingNow();
}

/** Commits `committer` at process exit unless `forget` is called first. */
export function commitAtExit(committer: DeferredCommitter): void {
  pending.add(committer);
  if (!hooked) {
    hooked = true;
    process.on('exit', commitAllAtExit);
  }
}

export function forget(committer: DeferredCommitter): void {
  pending.delete(committer);
}

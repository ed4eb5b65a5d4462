// flock for the heap backend. With the addon present (e.g. in a runtime that only forbids
// external ArrayBuffers) the real flock(2) is used on the fs descriptor. Without it, locks
// are best-effort and process-local: they exclude other descriptors of this process only,
// not other processes, and a blocking request that conflicts fails with EDEADLK instead
// of hanging the single JavaScript thread forever.

import type { LockKind } from '../../backend.js';
import { MmapError } from '../../errors.js';
import { nodeOs } from '../../node-builtins.js';
import type { NativeAddon } from '../posix/addon.js';
import { LOCK_CODES } from '../posix/index.js';

interface LockState {
  shared: Set<number>;
  exclusive: number | null;
}

const processLocks = new Map<string, LockState>();

function errno(name: 'EAGAIN' | 'EDEADLK'): number {
  return nodeOs().constants.errno[name];
}

export function lockFile(
  addon: NativeAddon | null,
  fd: number,
  key: string,
  path: string,
  kind: LockKind | 'unlock',
  wait: boolean,
): void {
  if (addon?.supported) {
    addon.lockDescriptor(fd, LOCK_CODES[kind], wait, path);
    return;
  }
  let state = processLocks.get(key);
  if (state === undefined) {
    state = { shared: new Set(), exclusive: null };
    processLocks.set(key, state);
  }
  // Like flock, a new request converts the descriptor's existing lock.
  state.shared.delete(fd);
  if (state.exclusive === fd) state.exclusive = null;
  if (kind === 'unlock') return;
  const conflict =
    (state.exclusive !== null && state.exclusive !== fd) ||
    (kind === 'exclusive' && state.shared.size > 0);
  if (conflict) {
    throw MmapError.fromErrno(errno(wait ? 'EDEADLK' : 'EAGAIN'), 'flock', path);
  }
  if (kind === 'shared') state.shared.add(fd);
  else state.exclusive = fd;
}

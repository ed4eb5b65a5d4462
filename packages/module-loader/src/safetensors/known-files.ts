import type { SafetensorsTensorInfo } from './header.js';
import { type FileIdentity, sameIdentity } from './identity.js';

/**
 * What is remembered about one weight file: its identity when it was read, its tensor
 * table, and the SHA-256 of each tensor hashed so far (tensor name → hex digest).
 */
export interface KnownFile {
  readonly identity: FileIdentity;
  readonly tensors: readonly SafetensorsTensorInfo[];
  readonly digests: Map<string, string>;
}

/** Somewhere known files can be recalled from (the process memo, a record next to a cache). */
export interface KnownFileSource {
  /** The record for exactly this identity, or undefined. */
  recall(identity: FileIdentity): KnownFile | undefined;
}

/** Files remembered per process; beyond this many the oldest are forgotten. */
export const MAX_REMEMBERED_FILES = 4096;

const memo = new Map<string, KnownFile>();

/** The in-process memo: programs loaded again in this process (heap caches included). */
export const processMemo: KnownFileSource & { remember(file: KnownFile): void; clear(): void } = {
  recall(identity) {
    const known = memo.get(identity.path);
    return known !== undefined && sameIdentity(known.identity, identity) ? known : undefined;
  },
  remember(file) {
    memo.delete(file.identity.path);
    memo.set(file.identity.path, file);
    if (memo.size > MAX_REMEMBERED_FILES) memo.delete(memo.keys().next().value as string);
  },
  clear() {
    memo.clear();
  },
};

import type { SafetensorsTensorInfo } from './header.js';
import { type FileIdentity, sameIdentity } from './identity.js';
import { TensorTable } from './tensor-table.js';

/**
 * What is remembered about one weight file: its identity when it was read, its tensor
 * table, and the SHA-256 of each tensor hashed so far (tensor name → hex digest).
 */
export interface KnownFile {
  readonly identity: FileIdentity;
  /** Wall-clock time (ns since the epoch) the header was read, before any tensor was hashed. */
  readonly readAtNs: bigint;
  readonly tensors: readonly SafetensorsTensorInfo[];
  /** Digests by tensor name (of a RememberedFile: a copy made on each read). */
  readonly digests: Map<string, string>;
}

/**
 * A known file as this package keeps it: the table in columns (see TensorTable). `tensors`
 * and `digests` are made from the columns when read (for callers of the KnownFile shape).
 */
export class RememberedFile implements KnownFile {
  constructor(
    readonly identity: FileIdentity,
    readonly readAtNs: bigint,
    readonly table: TensorTable,
  ) {}

  get tensors(): readonly SafetensorsTensorInfo[] {
    return this.table.infos();
  }

  get digests(): Map<string, string> {
    return this.table.digestMap();
  }
}

/** `known` in columns (a KnownFile from another source is converted once). */
export function remembered(known: KnownFile): RememberedFile {
  if (known instanceof RememberedFile) return known;
  return new RememberedFile(
    known.identity,
    known.readAtNs,
    TensorTable.fromInfos(known.tensors, known.digests),
  );
}

/** Somewhere known files can be recalled from (the process memo, a record next to a cache). */
export interface KnownFileSource {
  /** The record for exactly this identity, or undefined. */
  recall(identity: FileIdentity): KnownFile | undefined;
}

/**
 * A file modified less than this before it was read is not trusted from memory later: a
 * second write within the same timestamp tick (coarse clocks, 2 s on some file systems)
 * would leave size and mtime as they were ("racy git"). Such a file is read again next time.
 */
export const RACY_WINDOW_NS = 2_000_000_000n;

/** Whether `known` may stand in for a file with this identity. */
export function trustworthy(
  known: Pick<KnownFile, 'identity' | 'readAtNs'> | undefined,
  identity: FileIdentity,
): boolean {
  return (
    known !== undefined &&
    sameIdentity(known.identity, identity) &&
    known.readAtNs - identity.mtimeNs >= RACY_WINDOW_NS
  );
}

/** Wall-clock now in ns (the clock file times come from). */
export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/** Files remembered per process; beyond this many the oldest are forgotten. */
export const MAX_REMEMBERED_FILES = 4096;

const memo = new Map<string, RememberedFile>();

/** The in-process memo: programs loaded again in this process (heap caches included). */
export const processMemo: KnownFileSource & { remember(file: KnownFile): void; clear(): void } = {
  recall(identity) {
    const known = memo.get(identity.path);
    return trustworthy(known, identity) ? known : undefined;
  },
  remember(file) {
    memo.delete(file.identity.path);
    memo.set(file.identity.path, remembered(file));
    if (memo.size > MAX_REMEMBERED_FILES) memo.delete(memo.keys().next().value as string);
  },
  clear() {
    memo.clear();
  },
};

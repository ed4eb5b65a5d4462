import type { PackingLayout } from '../packing/packing-layout.js';

/** Per-entry metadata of a named packed entry (ExecuTorch's PackedDataMeta, plus ours). */
export interface PackedDataMeta {
  /** Index into the cache's list of packed buffers. */
  offset: number;
  dataSize: number;
  /** Runtimes holding this entry; incremented at finalize, decremented by deletePackedData. */
  refCount: number;
  /** Looked up or inserted by the runtime being built; cleared at finalize. */
  inCurrentRuntime: boolean;
  /** Bytes live in persistent storage: the entry survives refCount 0. */
  fromLoad: boolean;
  seed: number;
  fingerprint: number;
  /** Full packing layout; absent for entries loaded from files that store none (v2). */
  layout?: PackingLayout;
  /** Monotonic tick of the last look-up hit or insert (for least-recently-used eviction). */
  lastUsed?: number;
}

/** Per-entry metadata of a named packed entry (ExecuTorch's PackedDataMeta, plus fingerprint). */
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
}

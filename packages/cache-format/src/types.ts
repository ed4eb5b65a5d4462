import type { XpwcErrorCode } from './errors.js';

/**
 * How an entry's data was packed: enough to tell whether a cached entry fits an operator
 * (the XNNPACK seed alone does not: it XORs the dimensions). All fields are u32; stored as a
 * 32-byte record of 8 x u32 LE in this order.
 */
export interface PackingLayout {
  /** XNNPACK operator type (e.g. fully_connected_nc_f32 is 63 at XNNPACK 92a7ad50). */
  readonly operatorType: number;
  /** nc: output channels. */
  readonly outputChannels: number;
  /** kc: input channels. */
  readonly inputChannels: number;
  readonly nr: number;
  readonly kr: number;
  readonly sr: number;
  /** Extra bytes the packer appends per output-channel block (scales, sums, ...). */
  readonly extraBytes: number;
  /** `LAYOUT_FLAG_TRANSPOSED` and future bits. */
  readonly flags: number;
}

/** One index entry of a v2 trailer (ExecuTorch's format). */
export interface XpwcEntryV2 {
  /**
   * The name's bytes as a string (ExecuTorch: weight key, then bias key, concatenated). Valid
   * UTF-8 decodes to that text; other bytes decode losslessly (see `nameFromBytes`).
   */
  readonly name: string;
  /** Absolute file offset of the packed data. */
  readonly fileOffset: number;
  /** Exact number of packed bytes (the region on disk is rounded up to a page). */
  readonly dataSize: number;
  /** XNNPACK's packing seed (u32); a mismatch means "re-pack". */
  readonly seed: number;
}

/** One index entry of a v3 trailer. */
export interface XpwcEntryV3 extends XpwcEntryV2 {
  /** XNNPACK's fingerprint_id of the packing algorithm (u32); 0 when unknown. */
  readonly fingerprint: number;
  /** CRC32C of the entry's `dataSize` data bytes (u32). */
  readonly crc32c: number;
  /** How the data was packed; absent when unknown (stored as 32 zero bytes, or not at all). */
  readonly layout?: PackingLayout;
}

export type XpwcEntry = XpwcEntryV2 | XpwcEntryV3;

/**
 * A decoded index as columns, entry `i` at index `i` of each (index order, duplicates
 * included): what a loader reads in one pass without an object per entry. A trailer's
 * `entries` are made from these when first read.
 */
export interface EntryColumns {
  readonly length: number;
  readonly names: readonly string[];
  readonly fileOffsets: Float64Array;
  readonly dataSizes: Float64Array;
  readonly seeds: Uint32Array;
  /** v3 only (null in a v2 index). */
  readonly fingerprints: Uint32Array | null;
  /** v3 only (null in a v2 index). */
  readonly crc32cs: Uint32Array | null;
  /** Per entry its layout or undefined; null when the index carries no layout records. */
  readonly layouts: readonly (PackingLayout | undefined)[] | null;
}

export interface FooterV2 {
  readonly version: 2;
  readonly footerSize: 20;
  /** Offset of the footer's first byte (absolute when the file size is known). */
  readonly footerOffset: number;
  readonly indexStart: number;
  readonly entryCount: number;
}

export interface FooterV3 {
  readonly version: 3;
  readonly footerSize: 56;
  readonly footerOffset: number;
  readonly indexStart: number;
  readonly entryCount: number;
  readonly identityLength: number;
  readonly generation: number;
  /** End offset of the previous committed trailer; 0 when there is none. */
  readonly prevTrailerEnd: number;
  /** Generation of the previous committed trailer; 0 when there is none. */
  readonly prevGeneration: number;
  readonly flags: number;
  readonly trailerCrc32c: number;
}

export type Footer = FooterV2 | FooterV3;

export interface TrailerV2 {
  readonly version: 2;
  /** Offset of the first index byte (= the trailer's first byte). */
  readonly indexStart: number;
  /** Offset just past the footer (the file size for the live trailer). */
  readonly trailerEnd: number;
  /** Every entry, in file order, duplicates included (made from `columns` when first read). */
  readonly entries: XpwcEntryV2[];
  /** The same entries as columns. */
  readonly columns: EntryColumns;
  readonly identity: null;
  /** What lenient decoding tolerated (see `DecodeOptions.lenient`); [] when the trailer is clean. */
  readonly tolerated: readonly XpwcIssue[];
}

/**
 * A defect that lenient decoding accepted (ExecuTorch's loader accepts it too). `code` is the
 * error strict decoding throws for it; `offset` the absolute file offset concerned.
 */
export interface XpwcIssue {
  readonly code: XpwcErrorCode;
  readonly message: string;
  readonly offset: number;
}

export interface TrailerV3 {
  readonly version: 3;
  readonly indexStart: number;
  readonly trailerEnd: number;
  /** Every entry, in index order (made from `columns` when first read). */
  readonly entries: XpwcEntryV3[];
  /** The same entries as columns. */
  readonly columns: EntryColumns;
  readonly identity: string;
  readonly generation: number;
  readonly prevTrailerEnd: number;
  readonly prevGeneration: number;
  readonly trailerCrc32c: number;
  /** Footer flags (`V3_FLAG_ENTRY_LAYOUT` when the entries carry layout records). */
  readonly flags: number;
}

export type Trailer = TrailerV2 | TrailerV3;

export interface DecodeOptions {
  /**
   * The cache identity the reader expects. A v3 trailer with another identity is rejected
   * with `ERR_XPWC_IDENTITY_MISMATCH`. v2 trailers carry no identity and are not affected.
   */
  readonly expectedIdentity?: string;
  /**
   * Read v2 files the way ExecuTorch's loader does (XNNWeightsCache.cpp load_packed_cache):
   * an index that ends before `entry_count` entries (its loop stops when fewer than 4 bytes
   * remain), bytes after the last entry, and an empty index (index_start = footer offset, e.g.
   * a file that is only the 20-byte footer) decode to the valid entries, and each defect is
   * listed in `TrailerV2.tolerated`. Everything else is as strict as the default. No effect on
   * v3 trailers.
   */
  readonly lenient?: boolean;
  /**
   * The CRC32C (Castagnoli) a v3 trailer is checked with (default `crc32cOf`): a reader that
   * has a native one (e.g. `@memlayer/mmap-native`'s `crc32c`) checks a large index without
   * running the JavaScript one cold. It must compute the same function.
   */
  readonly crc32c?: (bytes: Uint8Array) => number;
}

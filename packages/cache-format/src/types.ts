/** One index entry of a v2 trailer (ExecuTorch's format). */
export interface XpwcEntryV2 {
  /** UTF-8 name (ExecuTorch: weight name, then bias name, concatenated). */
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
}

export type XpwcEntry = XpwcEntryV2 | XpwcEntryV3;

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
  /** Every entry, in file order, duplicates included. */
  readonly entries: XpwcEntryV2[];
  readonly identity: null;
}

export interface TrailerV3 {
  readonly version: 3;
  readonly indexStart: number;
  readonly trailerEnd: number;
  readonly entries: XpwcEntryV3[];
  readonly identity: string;
  readonly generation: number;
  readonly prevTrailerEnd: number;
  readonly prevGeneration: number;
  readonly trailerCrc32c: number;
}

export type Trailer = TrailerV2 | TrailerV3;

export interface DecodeOptions {
  /**
   * The cache identity the reader expects. A v3 trailer with another identity is rejected
   * with `ERR_XPWC_IDENTITY_MISMATCH`. v2 trailers carry no identity and are not affected.
   */
  readonly expectedIdentity?: string;
}

/** "XPWC" as a little-endian u32; on disk the bytes are 43 57 50 58. */
export const MAGIC = 0x58505743;

/** ExecuTorch's first format: like v2 without `seed`. Detected and reported stale, never loaded. */
export const VERSION_1 = 1;
/** ExecuTorch's XNNWeightsCache format (interop). */
export const VERSION_2 = 2;
/** Ours: per-entry fingerprint and CRC32C, identity, trailer CRC, commit slots. */
export const VERSION_3 = 3;
/** The version new files are written in. */
export const LATEST_VERSION = VERSION_3;
/** Versions a reader can load (v1 is recognised only to report it stale). */
export const READABLE_VERSIONS: readonly number[] = [VERSION_2, VERSION_3];

/** Page size assumed when the caller does not know the writer's (x86-64 Linux). */
export const DEFAULT_PAGE_SIZE = 4096;

/** Every footer ends with `magic:u32 | version:u32`. */
export const FOOTER_TAIL_SIZE = 8;
/** v1 footer: index_start u64 | entry_count u32 | magic u32 | version u32. */
export const V1_FOOTER_SIZE = 20;
/** v2 footer: index_start u64 | entry_count u32 | magic u32 | version u32. */
export const V2_FOOTER_SIZE = 20;
/** v3 footer, see README. */
export const V3_FOOTER_SIZE = 56;
/** Reading this many bytes from the end of a file covers the footer of every version. */
export const MAX_FOOTER_SIZE = V3_FOOTER_SIZE;

/** v2 entry bytes besides the name: name_len u32, file_offset u64, data_size u64, seed u32. */
export const V2_ENTRY_FIXED_SIZE = 24;
/** v3 entry bytes besides the name: the v2 ones plus fingerprint u32, crc32c u32. */
export const V3_ENTRY_FIXED_SIZE = 32;

/** Bytes reserved at the start of a v3 file for the header; packed data starts at or after it. */
export const V3_HEADER_SIZE = 4096;
/** Fixed (identification) part of the v3 header, at offset 0. */
export const V3_HEADER_FIXED_SIZE = 32;
/** Size of one commit slot. */
export const COMMIT_SLOT_SIZE = 32;
/** File offsets of commit slots 0 and 1: each in its own 512-byte sector. */
export const COMMIT_SLOT_OFFSETS: readonly [number, number] = [512, 1024];
/** A reader needs the first this-many bytes of a v3 file to decode the header and both slots. */
export const V3_HEADER_READ_SIZE = 1056;
/** Smallest end offset a v3 trailer can have (header, then at least a footer). */
export const V3_MIN_TRAILER_END = V3_HEADER_SIZE + V3_FOOTER_SIZE;

/** The `name_len` u32 that starts every entry; the name follows it. */
export const ENTRY_NAME_OFFSET = 4;
/**
 * Byte offsets of the entry fields that follow the name, relative to the first byte after the
 * name. v2 entries end after `seed`; v3 entries after `crc32c`, or after the 32-byte packing
 * layout record when the footer flag `V3_FLAG_ENTRY_LAYOUT` is set.
 */
export const ENTRY_FIELDS = {
  fileOffset: 0,
  dataSize: 8,
  seed: 16,
  fingerprint: 20,
  crc32c: 24,
  layout: 28,
} as const;

/** v3 footer flag bit 0: every entry carries a 32-byte packing layout record after `crc32c`. */
export const V3_FLAG_ENTRY_LAYOUT = 1;
/** Footer flag bits a reader understands; any other bit is `ERR_XPWC_BAD_FIELD`. */
export const V3_KNOWN_FLAGS = V3_FLAG_ENTRY_LAYOUT;
/** Size of the per-entry packing layout record: 8 x u32. */
export const V3_ENTRY_LAYOUT_SIZE = 32;
/** Byte offsets of the packing layout record fields (u32 each), relative to the record. */
export const PACKING_LAYOUT_FIELDS = {
  operatorType: 0,
  outputChannels: 4,
  inputChannels: 8,
  nr: 12,
  kr: 16,
  sr: 20,
  extraBytes: 24,
  flags: 28,
} as const;
/** Packing layout flag bit 0: the weights were given transposed ([input, output] order). */
export const LAYOUT_FLAG_TRANSPOSED = 1;

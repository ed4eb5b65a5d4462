export { alignUp, isAligned, isValidPageSize } from './align.js';
export {
  COMMIT_SLOT_OFFSETS,
  COMMIT_SLOT_SIZE,
  DEFAULT_PAGE_SIZE,
  ENTRY_FIELDS,
  ENTRY_NAME_OFFSET,
  FOOTER_TAIL_SIZE,
  LATEST_VERSION,
  LAYOUT_FLAG_TRANSPOSED,
  MAGIC,
  MAX_FOOTER_SIZE,
  PACKING_LAYOUT_FIELDS,
  READABLE_VERSIONS,
  V1_FOOTER_SIZE,
  V2_ENTRY_FIXED_SIZE,
  V2_FOOTER_SIZE,
  V3_ENTRY_FIXED_SIZE,
  V3_ENTRY_LAYOUT_SIZE,
  V3_FLAG_ENTRY_LAYOUT,
  V3_FOOTER_SIZE,
  V3_HEADER_FIXED_SIZE,
  V3_HEADER_READ_SIZE,
  V3_HEADER_SIZE,
  V3_KNOWN_FLAGS,
  V3_MIN_TRAILER_END,
  VERSION_1,
  VERSION_2,
  VERSION_3,
} from './constants.js';
export { type ChecksummedEntry, crc32cOf, entryDataMatches, verifyEntryData } from './crc.js';
export {
  isXpwcFormatError,
  XPWC_ERROR_CODES,
  type XpwcErrorCode,
  XpwcFormatError,
} from './errors.js';
export {
  type DescribeFileLayoutOptions,
  describeFileLayout,
  type FileLayout,
  type FileLayoutInput,
  type FileLayoutReport,
  type FileRegion,
  type FileRegionKind,
  ORPHAN_REGION_KINDS,
  type ReadFileLayoutOptions,
  readFileLayout,
} from './file-layout.js';
export { readFooter, V2_FOOTER_FIELDS, V3_FOOTER_FIELDS } from './footer.js';
export {
  COMMIT_SLOT_FIELDS,
  type CommitPlan,
  type CommitSlot,
  commitSlotForTrailer,
  decodeCommitSlot,
  decodeHeader,
  type EncodeHeaderOptions,
  encodeCommitSlot,
  encodeHeader,
  isV3Header,
  orderCommitSlots,
  pickCommittedTrailer,
  planCommit,
  type SlotIndex,
  type SlotState,
  V3_HEADER_FIELDS,
  type V3Header,
} from './header.js';
export {
  MAX_ENTRY_COUNT,
  MAX_FILE_SIZE,
  MAX_IDENTITY_LENGTH,
  MAX_NAME_LENGTH,
  MAX_PAGE_SIZE,
  MAX_TRAILER_BYTES,
} from './limits.js';
export {
  type DuplicateName,
  entriesByName,
  findDuplicateNames,
  lintTrailer,
  XPWC_WARNING_CODES,
  type XpwcWarning,
  type XpwcWarningCode,
} from './lint.js';
export { nameFromBytes, nameToBytes } from './names.js';
export {
  type ByteSource,
  type ByteSourceAsync,
  type CommittedTrailer,
  type LoadedTrailer,
  type ReadAt,
  type ReadAtAsync,
  readCommittedTrailer,
  readCommittedTrailerAsync,
  readTrailer,
  readTrailerAsync,
  type SkippedCommit,
  trailerHistory,
} from './recovery.js';
export {
  type CommitSlotReport,
  type CommitSlotStatus,
  DAMAGED_SLOT_STATUSES,
} from './slot-report.js';
export {
  decodeTrailer,
  type EncodeOptions,
  type EncodeOptionsV2,
  encodeTrailer,
} from './trailer.js';
export type { EncodeOptionsV3 } from './trailer-v3.js';
export type {
  DecodeOptions,
  EntryColumns,
  Footer,
  FooterV2,
  FooterV3,
  PackingLayout,
  Trailer,
  TrailerV2,
  TrailerV3,
  XpwcEntry,
  XpwcEntryV2,
  XpwcEntryV3,
  XpwcIssue,
} from './types.js';

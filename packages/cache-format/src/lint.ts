import { isValidPageSize } from './align.js';
import { DEFAULT_PAGE_SIZE } from './constants.js';
import { XpwcFormatError } from './errors.js';
import type { Trailer, TrailerV2, XpwcEntry, XpwcIssue } from './types.js';

export type XpwcWarningCode =
  | 'WARN_XPWC_DUPLICATE_NAME'
  | 'WARN_XPWC_UNALIGNED_OFFSET'
  | 'WARN_XPWC_OVERLAPPING_DATA'
  /** A v2 defect that lenient decoding tolerated (as ExecuTorch's loader does). */
  | 'WARN_XPWC_TOLERATED';

/** Every warning code `lintTrailer` returns. */
export const XPWC_WARNING_CODES: readonly XpwcWarningCode[] = [
  'WARN_XPWC_DUPLICATE_NAME',
  'WARN_XPWC_UNALIGNED_OFFSET',
  'WARN_XPWC_OVERLAPPING_DATA',
  'WARN_XPWC_TOLERATED',
];

/** A finding that does not make the trailer unreadable but that `verify` reports. */
export interface XpwcWarning {
  readonly code: XpwcWarningCode;
  readonly message: string;
  /** Index of the entry in `trailer.entries` the warning is about; -1 for the trailer itself. */
  readonly entryIndex: number;
  /** That entry's name; '' for the trailer itself. */
  readonly name: string;
  /** File offset concerned (the entry's data offset, or where the tolerated defect is). */
  readonly offset: number;
  /** WARN_XPWC_TOLERATED: the defect, with the code strict decoding throws for it. */
  readonly issue?: XpwcIssue;
}

export interface DuplicateName {
  readonly name: string;
  /** Indices in the entries array, in file order; the cache uses the last one. */
  readonly indices: readonly number[];
}

function entriesOf(input: Trailer | readonly XpwcEntry[]): readonly XpwcEntry[] {
  const entries = Array.isArray(input) ? input : (input as Trailer | null)?.entries;
  if (!Array.isArray(entries)) {
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      'expected a trailer or an entries array',
    );
  }
  return entries;
}

/**
 * Names that occur more than once, in order of first occurrence. ExecuTorch lets the later
 * entry overwrite the earlier one; so does the cache (see `entriesByName`), `verify` reports it.
 */
export function findDuplicateNames(input: Trailer | readonly XpwcEntry[]): DuplicateName[] {
  const entries = entriesOf(input);
  const seen = new Map<string, number[]>();
  for (let i = 0; i < entries.length; i++) {
    const name = (entries[i] as XpwcEntry).name;
    const list = seen.get(name);
    if (list === undefined) seen.set(name, [i]);
    else list.push(i);
  }
  const out: DuplicateName[] = [];
  for (const [name, indices] of seen) if (indices.length > 1) out.push({ name, indices });
  return out;
}

/** Name → entry, the last entry winning for a duplicated name (ExecuTorch's behaviour). */
export function entriesByName<E extends XpwcEntry>(entries: readonly E[]): Map<string, E> {
  const map = new Map<string, E>();
  for (const e of entriesOf(entries)) map.set(e.name, e as E);
  return map;
}

/**
 * Checks a decoded trailer for things the format allows but a healthy writer never produces:
 * duplicate names, data offsets not aligned to `pageSize` (the writer's page size; use the v3
 * header's `pageSize` when known), and entries whose data ranges overlap. Given a trailer
 * that lenient decoding read, it also reports each tolerated defect (`WARN_XPWC_TOLERATED`).
 */
export function lintTrailer(
  input: Trailer | readonly XpwcEntry[],
  pageSize: number = DEFAULT_PAGE_SIZE,
): XpwcWarning[] {
  const entries = entriesOf(input);
  if (!isValidPageSize(pageSize)) {
    throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', 'pageSize must be a power of two');
  }
  const warnings: XpwcWarning[] = [];
  const tolerated = Array.isArray(input) ? [] : ((input as Partial<TrailerV2>).tolerated ?? []);
  for (const issue of tolerated) {
    warnings.push({
      code: 'WARN_XPWC_TOLERATED',
      message: `${issue.code} tolerated (ExecuTorch's loader accepts it): ${issue.message}`,
      entryIndex: -1,
      name: '',
      offset: issue.offset,
      issue,
    });
  }
  for (const { name, indices } of findDuplicateNames(entries)) {
    for (const i of indices.slice(0, -1)) {
      warnings.push({
        code: 'WARN_XPWC_DUPLICATE_NAME',
        message: `name ${JSON.stringify(name)} occurs ${indices.length} times; entry ${i} is shadowed by entry ${indices[indices.length - 1]}`,
        entryIndex: i,
        name,
        offset: (entries[i] as XpwcEntry).fileOffset,
      });
    }
  }
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as XpwcEntry;
    if (e.fileOffset % pageSize !== 0) {
      warnings.push({
        code: 'WARN_XPWC_UNALIGNED_OFFSET',
        message: `entry ${i} ${JSON.stringify(e.name)}: file_offset ${e.fileOffset} is not a multiple of the page size ${pageSize}`,
        entryIndex: i,
        name: e.name,
        offset: e.fileOffset,
      });
    }
  }
  const order = entries
    .map((_, i) => i)
    .filter((i) => (entries[i] as XpwcEntry).dataSize > 0)
    .sort(
      (a, b) =>
        (entries[a] as XpwcEntry).fileOffset - (entries[b] as XpwcEntry).fileOffset || a - b,
    );
  let reachIndex = -1;
  let reach = 0;
  for (const i of order) {
    const e = entries[i] as XpwcEntry;
    if (reachIndex >= 0 && e.fileOffset < reach) {
      const other = entries[reachIndex] as XpwcEntry;
      warnings.push({
        code: 'WARN_XPWC_OVERLAPPING_DATA',
        message: `entry ${i} ${JSON.stringify(e.name)} [${e.fileOffset}, ${e.fileOffset + e.dataSize}) overlaps entry ${reachIndex} ${JSON.stringify(other.name)} [${other.fileOffset}, ${other.fileOffset + other.dataSize})`,
        entryIndex: i,
        name: e.name,
        offset: e.fileOffset,
      });
    }
    if (e.fileOffset + e.dataSize > reach) {
      reach = e.fileOffset + e.dataSize;
      reachIndex = i;
    }
  }
  return warnings;
}

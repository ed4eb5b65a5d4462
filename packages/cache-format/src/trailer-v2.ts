// Version 2: ExecuTorch's XNNWeightsCache trailer (entries, then a 20-byte footer).
import { viewOf, writeU64 } from './bytes.js';
import { MAGIC, V2_FOOTER_SIZE, VERSION_2 } from './constants.js';
import {
  decodeEntries,
  type EntryFormat,
  entriesWhenRead,
  prepareEntries,
  writeEntries,
} from './entry-codec.js';
import { XpwcFormatError } from './errors.js';
import { checkIndexStart, V2_FOOTER_FIELDS } from './footer.js';
import { checkEncodedTrailerSize, checkEntryCount, requireTrailerBytes } from './trailer-checks.js';
import type { FooterV2, TrailerV2, XpwcEntryV2, XpwcIssue } from './types.js';

const V2_FORMAT: EntryFormat = { version: 2, withLayout: false };

/** Decodes the v2 trailer ending at `end`; `lenient` reads what ExecuTorch's loader reads. */
export function decodeV2(
  bytes: Uint8Array,
  end: number,
  footer: FooterV2,
  lenient: boolean,
): TrailerV2 {
  const tolerated: XpwcIssue[] | null = lenient ? [] : null;
  const { indexStart, footerOffset } = footer;
  if (tolerated !== null && indexStart === footerOffset) {
    tolerated.push({
      code: 'ERR_XPWC_BAD_INDEX_START',
      message: `empty index: index_start ${indexStart} is the footer's offset`,
      offset: footerOffset,
    });
  } else {
    checkIndexStart(footer);
  }
  const base = requireTrailerBytes(bytes, end, indexStart);
  checkEntryCount(footer.entryCount, footerOffset + V2_FOOTER_FIELDS.entryCount);
  const columns = decodeEntries(
    bytes,
    base,
    indexStart,
    footerOffset,
    footer.entryCount,
    V2_FORMAT,
    tolerated,
  );
  const entries = entriesWhenRead<XpwcEntryV2>(columns);
  return {
    version: 2,
    indexStart,
    trailerEnd: end,
    get entries() {
      return entries();
    },
    columns,
    identity: null,
    tolerated: tolerated ?? [],
  };
}

/** Encodes a v2 trailer (at least one entry: ExecuTorch's loader rejects an empty index). */
export function encodeV2(entries: readonly XpwcEntryV2[], indexStart: number): Uint8Array {
  if (entries.length === 0) {
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      'a v2 trailer needs at least one entry (ExecuTorch rejects an empty index)',
    );
  }
  const prepared = prepareEntries(entries, V2_FORMAT, indexStart);
  const size = prepared.size + V2_FOOTER_SIZE;
  checkEncodedTrailerSize(indexStart, size);
  const out = new Uint8Array(size);
  const p = writeEntries(out, entries, prepared, V2_FORMAT);
  const dv = viewOf(out);
  const F = V2_FOOTER_FIELDS;
  writeU64(dv, p + F.indexStart, indexStart);
  dv.setUint32(p + F.entryCount, entries.length, true);
  dv.setUint32(p + F.magic, MAGIC, true);
  dv.setUint32(p + F.version, VERSION_2, true);
  return out;
}

import { isU32 } from './bytes.js';
import { PACKING_LAYOUT_FIELDS, V3_ENTRY_LAYOUT_SIZE } from './constants.js';
import { XpwcFormatError } from './errors.js';
import type { PackingLayout } from './types.js';

const FIELD_NAMES = Object.keys(PACKING_LAYOUT_FIELDS) as Array<keyof PackingLayout>;

/**
 * Reads the 32-byte layout record at `at`. 32 zero bytes mean "no layout" (an entry written
 * without one in a file where other entries have one) and come back as undefined. A record
 * equal to `previous` field for field returns `previous` itself: a model's layers mostly
 * share a few shapes, so a decoder keeps one frozen object per run of equal layouts rather
 * than one per entry.
 */
export function readPackingLayoutShared(
  dv: DataView,
  at: number,
  previous: PackingLayout | undefined,
): PackingLayout | undefined {
  const F = PACKING_LAYOUT_FIELDS;
  const operatorType = dv.getUint32(at + F.operatorType, true);
  const outputChannels = dv.getUint32(at + F.outputChannels, true);
  const inputChannels = dv.getUint32(at + F.inputChannels, true);
  const nr = dv.getUint32(at + F.nr, true);
  const kr = dv.getUint32(at + F.kr, true);
  const sr = dv.getUint32(at + F.sr, true);
  const extraBytes = dv.getUint32(at + F.extraBytes, true);
  const flags = dv.getUint32(at + F.flags, true);
  if ((operatorType | outputChannels | inputChannels | nr | kr | sr | extraBytes | flags) === 0) {
    return undefined;
  }
  if (
    previous !== undefined &&
    previous.operatorType === operatorType &&
    previous.outputChannels === outputChannels &&
    previous.inputChannels === inputChannels &&
    previous.nr === nr &&
    previous.kr === kr &&
    previous.sr === sr &&
    previous.extraBytes === extraBytes &&
    previous.flags === flags
  ) {
    return previous;
  }
  return Object.freeze({
    operatorType,
    outputChannels,
    inputChannels,
    nr,
    kr,
    sr,
    extraBytes,
    flags,
  });
}

/** Writes the record of `layout` (or 32 zero bytes for none) at `at`. */
export function writePackingLayout(
  dv: DataView,
  at: number,
  layout: PackingLayout | undefined,
): void {
  if (layout === undefined) {
    for (let i = 0; i < V3_ENTRY_LAYOUT_SIZE; i += 4) dv.setUint32(at + i, 0, true);
    return;
  }
  for (const name of FIELD_NAMES)
    dv.setUint32(at + PACKING_LAYOUT_FIELDS[name], layout[name], true);
}

/**
 * Validates a caller's layout: every field a u32, not all zero (32 zero bytes are how the
 * format says "no layout", so such a layout could not round trip).
 */
export function checkPackingLayout(layout: unknown, what: string): PackingLayout {
  if (layout === null || typeof layout !== 'object') {
    throw new XpwcFormatError('ERR_XPWC_INVALID_ARGUMENT', `${what}: layout must be an object`);
  }
  const l = layout as Record<string, unknown>;
  let allZero = true;
  for (const name of FIELD_NAMES) {
    if (!isU32(l[name])) {
      throw new XpwcFormatError(
        'ERR_XPWC_INVALID_ARGUMENT',
        `${what}: layout.${name} must be a u32, got ${String(l[name])}`,
      );
    }
    if (l[name] !== 0) allZero = false;
  }
  if (allZero) {
    throw new XpwcFormatError(
      'ERR_XPWC_INVALID_ARGUMENT',
      `${what}: an all-zero layout is how the format stores "no layout"; omit it instead`,
    );
  }
  return layout as PackingLayout;
}

/**
 * The full packing layout of a cache entry. Same fields, order and meaning as
 * @memlayer/cache-format's PackingLayout (all u32), which persists it in v3 entries.
 */
export interface PackingLayout {
  /** XNNPACK's operator-type enum value at the revision the seed was computed for. */
  readonly operatorType: number;
  readonly outputChannels: number;
  readonly inputChannels: number;
  readonly nr: number;
  readonly kr: number;
  readonly sr: number;
  readonly extraBytes: number;
  /** Bit set; LAYOUT_FLAG_TRANSPOSED when the weights were given [input][output]. */
  readonly flags: number;
}

/** Weights given transposed (XNN_FLAG_TRANSPOSE_WEIGHTS). */
export const LAYOUT_FLAG_TRANSPOSED = 1;

export function layoutsEqual(a: PackingLayout, b: PackingLayout): boolean {
  return (
    a === b ||
    (a.operatorType === b.operatorType &&
      a.outputChannels === b.outputChannels &&
      a.inputChannels === b.inputChannels &&
      a.nr === b.nr &&
      a.kr === b.kr &&
      a.sr === b.sr &&
      a.extraBytes === b.extraBytes &&
      a.flags === b.flags)
  );
}

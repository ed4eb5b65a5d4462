import type { PackingLayout } from '@memlayer/cache-format';

/**
 * The full packing layout of a cache entry is cache-format's PackingLayout (persisted in v3
 * entries): operator type, nc, kc, nr, kr, sr, extra bytes, flags.
 */
export { LAYOUT_FLAG_TRANSPOSED, type PackingLayout } from '@memlayer/cache-format';

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

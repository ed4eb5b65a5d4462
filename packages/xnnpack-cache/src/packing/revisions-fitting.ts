import { PACKED_ALLOCATION_ALIGNMENT, roundUp } from '../alignment.js';
import { assertNonNegativeInteger, assertPositiveInteger, invalidArgument } from '../errors.js';
import { assertTiling, GEMM_TILINGS, type GemmTiling } from '../operators/tiling.js';
import { XNNPACK_REVISIONS, type XnnpackRevision } from './xnnpack-revisions.js';

/** What a v2 entry records about its packing: only the seed and the size. */
export interface SeededEntry {
  readonly seed: number;
  readonly dataSize: number;
}

export interface RevisionsFittingOptions {
  /** Tilings to try (default: every GEMM_TILINGS value). */
  readonly tilings?: readonly GemmTiling[];
  /** Extra bytes per block to try (default: [0]). */
  readonly extraBytes?: readonly number[];
  /** Alignment the stored size was rounded up to (default PACKED_ALLOCATION_ALIGNMENT). */
  readonly alignment?: number;
}

/** One explanation of an entry: this revision and tiling packing this exact shape. */
export interface RevisionFit {
  readonly revision: XnnpackRevision;
  readonly operatorType: number;
  readonly tiling: GemmTiling;
  readonly extraBytes: number;
  readonly outputChannels: number;
  readonly inputChannels: number;
  /** The seed is inverted: the weights were given transposed. */
  readonly transposed: boolean;
}

/**
 * Which (XNNPACK revision, tiling) combinations explain a v2 entry: a fully-connected f32
 * operator of some exact (nc, kc) whose seed and aligned packed size equal the entry's.
 * A v2 file stores no layout, so this is how a tool tells which revision wrote it.
 *
 * The seed fixes nc ^ kc for each candidate, and nc·kc·4 <= dataSize, so the smaller of
 * the two is at most sqrt(dataSize / 4): enumerating it costs O(sqrt(dataSize)) per
 * candidate, not O(dataSize).
 */
export function revisionsFittingEntry(
  entry: SeededEntry,
  options: RevisionsFittingOptions = {},
): RevisionFit[] {
  if (entry === null || typeof entry !== 'object')
    invalidArgument('{ seed, dataSize }', 'entry', entry);
  const { seed, dataSize } = entry;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffff_ffff) {
    invalidArgument('a u32', 'entry.seed', seed);
  }
  assertNonNegativeInteger(dataSize, 'entry.dataSize');
  const tilings = options.tilings ?? Object.values(GEMM_TILINGS);
  const extras = options.extraBytes ?? [0];
  const alignment = options.alignment ?? PACKED_ALLOCATION_ALIGNMENT;
  assertPositiveInteger(alignment, 'options.alignment');

  const fits: RevisionFit[] = [];
  const limit = Math.floor(Math.sqrt(dataSize / 4));
  for (const revision of Object.keys(XNNPACK_REVISIONS) as XnnpackRevision[]) {
    const operatorType = XNNPACK_REVISIONS[revision].fullyConnectedNcF32;
    for (const tiling of tilings) {
      assertTiling(tiling);
      for (const extraBytes of extras) {
        for (const transposed of [false, true]) {
          const plain = (transposed ? ~seed : seed) >>> 0;
          // nc ^ kc for this candidate.
          const x = (plain ^ tiling.nr ^ tiling.kr ^ tiling.sr ^ extraBytes ^ operatorType) >>> 0;
          const candidate = { revision, operatorType, tiling, extraBytes, transposed };
          for (let small = 1; small <= limit; small++) {
            const other = (x ^ small) >>> 0;
            if (other === 0) continue;
            // small as kc; small as nc only when other > limit (otherwise the loop meets
            // that pair again with other as kc).
            if (alignedPackedSize(other, small, tiling, extraBytes, alignment) === dataSize) {
              fits.push(fit(candidate, other, small));
            }
            if (
              other > limit &&
              alignedPackedSize(small, other, tiling, extraBytes, alignment) === dataSize
            ) {
              fits.push(fit(candidate, small, other));
            }
          }
        }
      }
    }
  }
  return fits;
}

function fit(
  c: Omit<RevisionFit, 'outputChannels' | 'inputChannels'>,
  outputChannels: number,
  inputChannels: number,
): RevisionFit {
  const tiling = { nr: c.tiling.nr, kr: c.tiling.kr, sr: c.tiling.sr };
  return { ...c, tiling, outputChannels, inputChannels };
}

function alignedPackedSize(
  nc: number,
  kc: number,
  tiling: GemmTiling,
  extraBytes: number,
  alignment: number,
): number {
  const skr = tiling.sr * tiling.kr;
  const paddedKc = Math.ceil(kc / skr) * skr;
  const blocks = Math.ceil(nc / tiling.nr);
  return roundUp(blocks * (tiling.nr * (1 + paddedKc) * 4 + extraBytes), alignment);
}

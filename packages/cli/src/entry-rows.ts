import {
  LAYOUT_FLAG_TRANSPOSED,
  nameToBytes,
  type PackingLayout,
  type XpwcEntry,
} from '@memlayer/cache-format';
import {
  type CpuFeatures,
  revisionsFittingEntry,
  XNNPACK_REVISIONS,
  xnnpackGemmConfigs,
} from '@memlayer/xnnpack-cache';

export interface EntryRow {
  /** The name as decoded (non-UTF-8 bytes kept losslessly as U+DC80..U+DCFF). */
  name: string;
  /** Lower-case hex of the name's bytes when they are not valid UTF-8; null otherwise. */
  nameHex: string | null;
  /**
   * What the entry was packed from, when its name is ExecuTorch's content key: the SHA-256
   * of the weight's stored bytes, then of the bias's (node_visitor.py names constants by
   * hashlib.sha256(bytes).hexdigest(); the cache entry name is the two keys concatenated).
   */
  digests: { weight: string; bias: string | null } | null;
  offset: number;
  size: number;
  seed: number;
  fingerprint: number | null;
  crc32c: number | null;
  /** v3: how the entry was packed; null when the file does not record it. */
  layout: PackingLayout | null;
  /**
   * XNNPACK revisions this entry fits: v3 with a layout, by its operator type; otherwise
   * the revisions whose seed and packed size explain it (revisionsFittingEntry).
   */
  revisions: string[];
  /** v2 / no layout: each explanation, "revision tiling NCxKC" (e.g. "92a7ad50 nr8kr1sr1 96x32"). */
  fits: string[];
}

// Lone low surrogates only come from bytes that are not UTF-8 (nameFromBytes' escapes).
const ESCAPED_BYTE = /[\uDC80-\uDCFF]/;

export function toRow(entry: XpwcEntry): EntryRow {
  const v3 = 'crc32c' in entry;
  const layout = v3 ? (entry.layout ?? null) : null;
  return {
    name: entry.name,
    digests: digestsOf(entry.name),
    nameHex: ESCAPED_BYTE.test(entry.name)
      ? Buffer.from(nameToBytes(entry.name)).toString('hex')
      : null,
    offset: entry.fileOffset,
    size: entry.dataSize,
    seed: entry.seed,
    fingerprint: v3 ? entry.fingerprint : null,
    crc32c: v3 ? entry.crc32c : null,
    layout,
    ...(layout ? { revisions: revisionsOfOperator(layout.operatorType), fits: [] } : fitsOf(entry)),
  };
}

function revisionsOfOperator(operatorType: number): string[] {
  return Object.entries(XNNPACK_REVISIONS)
    .filter(([, revision]) => revision.fullyConnectedNcF32 === operatorType)
    .map(([name]) => name);
}

function fitsOf(entry: XpwcEntry): { revisions: string[]; fits: string[] } {
  const fits = revisionsFittingEntry({ seed: entry.seed, dataSize: entry.dataSize });
  return {
    revisions: [...new Set(fits.map((fit) => fit.revision))],
    fits: fits.map(
      (fit) =>
        `${fit.revision} ${tilingName(fit.tiling)} ${fit.outputChannels}x${fit.inputChannels}${fit.transposed ? ' transposed' : ''}`,
    ),
  };
}

function tilingName(tiling: { nr: number; kr: number; sr: number }): string {
  return `nr${tiling.nr}kr${tiling.kr}sr${tiling.sr}`;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

function digestsOf(name: string): EntryRow['digests'] {
  if (SHA256_HEX.test(name)) return { weight: name, bias: null };
  if (name.length === 128 && SHA256_HEX.test(name.slice(0, 64)) && SHA256_HEX.test(name.slice(64)))
    return { weight: name.slice(0, 64), bias: name.slice(64) };
  return null;
}

/**
 * How a person reads a name in a table: the text; `hex:…` for bytes that are not UTF-8;
 * for a content key, the first 12 hex digits of each digest (`sha256 3fa9c2d1e0b4+9d1c…`).
 */
export function displayName(row: Pick<EntryRow, 'name' | 'nameHex' | 'digests'>): string {
  if (row.digests !== null) {
    const short = (digest: string) => digest.slice(0, 12);
    return `sha256 ${short(row.digests.weight)}${row.digests.bias === null ? '' : `+${short(row.digests.bias)}`}`;
  }
  return row.nameHex === null ? row.name : `hex:${row.nameHex}`;
}

/** displayName for a bare entry name (the SVG's labels). */
export function displayEntryName(name: string): string {
  return displayName({
    name,
    nameHex: ESCAPED_BYTE.test(name) ? Buffer.from(nameToBytes(name)).toString('hex') : null,
    digests: digestsOf(name),
  });
}

/** "fc 63 · 96x32 · nr8 kr1 sr1" (+ extra bytes, transposed) or "-". */
export function describeLayout(layout: PackingLayout | null): string {
  if (layout === null) return '-';
  const extra = layout.extraBytes > 0 ? ` +${layout.extraBytes}B` : '';
  const transposed = (layout.flags & LAYOUT_FLAG_TRANSPOSED) !== 0 ? ' T' : '';
  return `op ${layout.operatorType} ${layout.outputChannels}x${layout.inputChannels} nr${layout.nr} kr${layout.kr} sr${layout.sr}${extra}${transposed}`;
}

export interface RevisionSummary {
  revision: string;
  /** Entries that fit this revision (any tiling). */
  entries: number;
  /**
   * The one or two tilings under which most entries fit this revision, joined by "+"
   * (null: by layout, or none).
   */
  tiling: string | null;
  tilingEntries: number;
}

/** The CPUs whose XNNPACK configs differ: each build packs a file with one such pair. */
const CPUS: CpuFeatures[] = [
  { arch: 'x64', sse2: true, avx: true, fma3: true, avx512f: true, zen: false },
  { arch: 'x64', sse2: true, avx: true, fma3: true, avx512f: false, zen: false },
  { arch: 'x64', sse2: true, avx: true, fma3: true, avx512f: false, zen: true },
  { arch: 'x64', sse2: true, avx: false, fma3: false, avx512f: false, zen: false },
  { arch: 'arm64', core: 'other' },
  { arch: 'arm64', core: 'cortex-x4' },
  { arch: 'arm64', core: 'exynos-m1' },
];
const CONFIG_PAIRS = CPUS.map((cpu) => xnnpackGemmConfigs(cpu)).flatMap((pair) =>
  pair === null ? [] : [[tilingName(pair.default), tilingName(pair.nr2)] as const],
);

/** The default/nr2 pair of some CPU that the most entries fit, and how many (ties: first). */
function bestConfigPair(entries: Set<string>[]): [string, number] | null {
  let best: [string, number] | null = null;
  for (const [wide, narrow] of CONFIG_PAIRS) {
    const fit = entries.filter((tilings) => tilings.has(wide) || tilings.has(narrow)).length;
    if (fit > 0 && (best === null || fit > best[1])) best = [`${wide}+${narrow}`, fit];
  }
  return best;
}

/** The tiling that the most of these entries (tiling sets) fit, and how many. */
function mostCommon(entries: Set<string>[]): [string, number] | null {
  const perTiling = new Map<string, number>();
  for (const tilings of entries)
    for (const tiling of tilings) perTiling.set(tiling, (perTiling.get(tiling) ?? 0) + 1);
  return [...perTiling].sort((a, b) => b[1] - a[1])[0] ?? null;
}

/**
 * Per revision, how many entries fit it, and under which tilings most of them do: one
 * build on one CPU packs with at most two (XNNPACK's default f32 GEMM config, and its nr2
 * config for layers the default fits badly). The file-level summary.
 */
export function revisionSummary(rows: EntryRow[]): RevisionSummary[] {
  return Object.keys(XNNPACK_REVISIONS).map((revision) => {
    const entries = rows.map(
      (row) =>
        new Set(
          row.fits
            .filter((fit) => fit.startsWith(`${revision} `))
            .map((fit) => fit.split(' ')[1] as string),
        ),
    );
    const first = mostCommon(entries);
    const second = first && mostCommon(entries.filter((tilings) => !tilings.has(first[0])));
    let tiling = first && (second ? `${first[0]}+${second[0]}` : first[0]);
    let tilingEntries = (first?.[1] ?? 0) + (second?.[1] ?? 0);
    // Two tilings explain entries only as one CPU's configs do: prefer such a pair.
    const pair = second ? bestConfigPair(entries) : null;
    if (pair !== null && pair[1] >= tilingEntries) [tiling, tilingEntries] = pair;
    return {
      revision,
      entries: rows.filter((row) => row.revisions.includes(revision)).length,
      tiling,
      tilingEntries,
    };
  });
}

import type { AllocationResult } from './allocations.js';
/** One measured (or derived) number and how it was obtained. */
export interface Figure {
  readonly label: string;
  readonly value: number | null;
  readonly unit: string;
  readonly method: string;
}

/** memlayer against the system people would use instead, measured side by side. */
export interface Comparison {
  readonly label: string;
  readonly ours: { readonly name: string; readonly value: number };
  readonly peer: { readonly name: string; readonly value: number };
  readonly unit: string;
  /** True when a larger value is the better one (throughput), false for time and bytes. */
  readonly higherIsBetter: boolean;
  /** How many times better memlayer is (> 1), or worse (< 1). */
  readonly advantage: number;
  readonly verdict: 'better' | 'worse' | 'equal';
  readonly method: string;
  /** Shown on the SVG chart of the main ratios. */
  readonly main: boolean;
}

export interface SectionResult {
  readonly id: SectionId;
  readonly title: string;
  readonly status: 'measured' | 'skipped' | 'failed';
  /** Why the section was skipped or failed. */
  readonly reason?: string;
  readonly figures: Figure[];
  readonly comparisons: Comparison[];
  readonly notes: string[];
  /** Extra series for the JSON document (e.g. file size per cycle). */
  readonly series?: Record<string, number[]>;
  readonly seconds: number;
}

/** What a section measures; the runner adds id, title and duration. */
export type SectionBody = Omit<SectionResult, 'id' | 'title' | 'seconds' | 'status'> & {
  readonly status?: SectionResult['status'];
};

export const SECTION_IDS = [
  'cold-warm',
  'native',
  'memory',
  'file-size',
  'mmap',
  'device',
  'versus-ort',
] as const;
export type SectionId = (typeof SECTION_IDS)[number];

export const SECTION_TITLES: Record<SectionId, string> = {
  'cold-warm': '1. Cold start vs warm start',
  native: '2. Native reference: XNNPACK C library (libxnnpack-dev)',
  memory: '3. Memory: dirty vs clean, PSS of 4 processes',
  'file-size': '4. Cache file size over reload cycles, seed change and compact()',
  mmap: '5. mmap-native vs fs.readFileSync vs mmap-io',
  device: '6. Device runner: uploads and committed bytes (old vs new design)',
  'versus-ort': '7. memlayer vs onnxruntime-node: the same MLP, start to output',
};

/** A model shape: `layers` square fully-connected layers of `dim` x `dim` f32 plus bias. */
export interface ModelSpec {
  readonly label: string;
  readonly layers: number;
  readonly dim: number;
}

export function weightBytesOf(spec: ModelSpec): number {
  return spec.layers * (spec.dim * spec.dim + spec.dim) * 4;
}

/** Builds a comparison, deriving the advantage and the verdict from the two values. */
export function compare(
  fields: Omit<Comparison, 'advantage' | 'verdict' | 'main'> & { main?: boolean },
): Comparison {
  const { ours, peer, higherIsBetter } = fields;
  const advantage = higherIsBetter ? ours.value / peer.value : peer.value / ours.value;
  const safe = Number.isFinite(advantage) ? advantage : ours.value === peer.value ? 1 : advantage;
  const verdict = Math.abs(safe - 1) < 0.02 ? 'equal' : safe > 1 ? 'better' : 'worse';
  return { ...fields, advantage: safe, verdict, main: fields.main ?? false };
}

/** Figures a section computes that another section of the same run may reuse. */
export interface SharedResults {
  coldWarm: Map<string, ColdWarmResult>;
}

export interface ColdWarmResult {
  readonly spec: ModelSpec;
  readonly coldMs: number;
  /** Cold start with save_weight_cache_on_disk = true (durable before runnable). */
  readonly coldSavedMs: number;
  readonly warmMs: number;
  readonly heapMs: number;
  /** Map + decode index + name table of the same file, fresh process (the warm start's floor). */
  readonly floorMs: number;
  /** Heap bytes a warm start and the floor allocate (allocations.ts), fresh children. */
  readonly warmAllocations: AllocationResult;
  readonly floorAllocations: AllocationResult;
  readonly coldMethodMs: number;
  readonly coldPacks: number;
  readonly warmPacks: number;
  readonly warmHits: number;
  readonly heapPacks: number;
  readonly runs: number;
  readonly outputsMatch: boolean | null;
  readonly cacheFileBytes: number;
  /** Peak RSS (VmHWM) of the cold and of the heap-only start's process: medians. */
  readonly coldPeakRssBytes: number;
  readonly heapPeakRssBytes: number;
  /** Bytes the cold start packed (packingStats().bytes). */
  readonly packedBytes: number;
}

export interface BenchOptions {
  readonly quick: boolean;
  /** Scratch folder for models and cache files (removed at the end). */
  readonly workDir: string;
  readonly progress: (message: string) => void;
  readonly shared: SharedResults;
}

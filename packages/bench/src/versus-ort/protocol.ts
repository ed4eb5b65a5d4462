// What the parent asks of a child of child.ts (as JSON in argv) and what the child answers.

/** How a child starts memlayer: a .pte + .ptd through Module with a file-backed cache. */
export interface MemlayerStart {
  readonly engine: 'memlayer';
  readonly pte: string;
  readonly ptd: string;
  readonly cachePath: string;
  /** Module's `threads` option; absent: not passed (the Module's default, 1). */
  readonly threads?: number;
}

/** How a child starts onnxruntime-node: InferenceSession.create(model, options). */
export interface OrtStart {
  readonly engine: 'ort';
  readonly model: string;
  /** InferenceSession.SessionOptions (JSON): see ort-sessions.ts. */
  readonly options: Record<string, unknown>;
}

export interface VersusTask {
  readonly kind: 'versus';
  readonly start: MemlayerStart | OrtStart;
  readonly dim: number;
  /** Batch sizes whose steady forward time is measured after the first output. */
  readonly steadyBatches: readonly number[];
  /** Milliseconds of timed forwards per batch size (at least STEADY_MIN_RUNS runs). */
  readonly steadyBudgetMs: number;
  /** Files whose mapped bytes the child reports once ready (from /proc/self/maps). */
  readonly mappedFiles: readonly string[];
  /** Answer "idle", start on "load", answer "result", exit on "exit" (the PSS measurement). */
  readonly hold: boolean;
}

export interface SteadyForward {
  readonly batch: number;
  /** Median milliseconds of one forward, after one untimed forward of that batch size. */
  readonly ms: number;
  readonly runs: number;
}

export interface VersusResult {
  /** The engine's package import alone. */
  readonly importMs: number;
  /** From before creating the model object to a model that can run (after the import). */
  readonly readyMs: number;
  /** The first forward, batch 1. */
  readonly firstForwardMs: number;
  /** performance.now() at the first output: milliseconds since the process started. */
  readonly firstOutputSinceStartMs: number;
  /** Outputs of the fixed batch-1 input (inputs.ts). */
  readonly output: number[];
  readonly steady: SteadyForward[];
  /** Bytes of mappings of task.mappedFiles once ready. */
  readonly mappedBytes: number;
}

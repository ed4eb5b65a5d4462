import { type IntermediatePlan, planIntermediates } from './intermediate-plan.js';
import type { XnnpackWorkspace } from './xnnpack-workspace.js';

/** The outputs of one run's nodes, in node order. */
export interface NodeOutputs {
  /** Floats of each node's output. */
  readonly lengths: readonly number[];
  /** Per node: whether its output is the method's (a new array every run: the caller's). */
  readonly external: readonly boolean[];
  /** Per node: the last node that reads its output (the node itself when none does). */
  readonly lastUses: readonly number[];
}

/**
 * The node outputs of one method: its own outputs new arrays at every run, the others
 * views of the workspace, planned by lifetime (intermediate-plan.ts) and viewed once per
 * input size. A run of the same size as the last one reuses the views (a new view per
 * layer per run cost about as much as a small layer); they are made again when the
 * workspace, shared with other methods, had to grow for one of them.
 */
export class IntermediateArena {
  readonly workspace: XnnpackWorkspace;
  #key: string | null = null;
  #nodes: NodeOutputs | null = null;
  #plan: IntermediatePlan | null = null;
  #buffer: ArrayBuffer | null = null;
  #outputs: Float32Array[] = [];
  /** The nodes whose output is the method's. */
  #external: number[] = [];

  constructor(workspace: XnnpackWorkspace) {
    this.workspace = workspace;
  }

  /**
   * Each node's output array for a run whose sizes follow from `key` (the same key, the
   * same sizes; `describe` is asked only for a new one). Valid until the next call, but
   * for the method's outputs, which are the caller's.
   */
  outputs(key: string, describe: () => NodeOutputs): readonly Float32Array[] {
    if (key !== this.#key || this.#nodes === null || this.#plan === null) {
      const nodes = describe();
      const sizes: number[] = [];
      const defs: number[] = [];
      const lastUses: number[] = [];
      nodes.lengths.forEach((length, node) => {
        if (nodes.external[node]) return;
        sizes.push(length);
        defs.push(node);
        lastUses.push(nodes.lastUses[node] as number);
      });
      this.#plan = planIntermediates(sizes, defs, lastUses);
      this.#nodes = nodes;
      this.#external = nodes.lengths.flatMap((_, node) => (nodes.external[node] ? [node] : []));
      this.#key = key;
      this.#buffer = null;
    }
    const { lengths, external } = this.#nodes;
    const buffer = this.workspace.reserve(this.#plan.floats * 4);
    if (buffer !== this.#buffer) {
      const { offsets } = this.#plan;
      let next = 0;
      this.#outputs = lengths.map((length, node) =>
        external[node]
          ? new Float32Array(0)
          : new Float32Array(buffer, (offsets[next++] as number) * 4, length),
      );
      this.#buffer = buffer;
    }
    for (const node of this.#external) {
      this.#outputs[node] = new Float32Array(lengths[node] as number);
    }
    return this.#outputs;
  }
}

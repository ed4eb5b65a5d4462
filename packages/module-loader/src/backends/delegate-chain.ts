// A delegate of fully-connected layers in one line runs as one native call, as XNNPACK's
// runtime runs a whole graph (xnnpack-cache's fullyConnectedChain): no JavaScript call
// and no crossing into the addon per layer. The chain runs each layer as its operator
// would, so the outputs are the bits of running the nodes one by one.
import type { FullyConnectedChain, FullyConnectedOperator } from '@memlayer/xnnpack-cache';
import { xnnpackCache } from '#deferred/xnnpack-cache';
import {
  XNN_VALUE_FLAG_EXTERNAL_INPUT,
  XNN_VALUE_FLAG_EXTERNAL_OUTPUT,
  XNODE_FULLY_CONNECTED,
  type XnnGraph,
} from '../pte/xnn-graph.js';
import type { MethodOperators } from './method-operators.js';
import { dimOf } from './xnnpack-delegate-checks.js';

/** A delegate's chain, made at its first run; dropped when its method is destroyed. */
export class DelegateChain {
  readonly #graph: XnnGraph;
  /** undefined until made; null when the delegate runs node by node. */
  #chain: FullyConnectedChain | null | undefined;

  constructor(graph: XnnGraph) {
    this.#graph = graph;
    this.#chain = isLayerLine(graph) ? undefined : null;
  }

  /** The chain of the delegate's operators, or null: run it node by node. */
  of(operators: MethodOperators): FullyConnectedChain | null {
    if (this.#chain !== undefined) return this.#chain;
    const layers: FullyConnectedOperator[] = [];
    for (let n = 0; n < this.#graph.nodeCount; n++) {
      layers.push(operators.get(n) as FullyConnectedOperator);
    }
    // Layers whose channels do not follow one another run node by node, failing as they
    // always did.
    if (!channelsFollow(this.#graph, layers)) {
      this.#chain = null;
      return null;
    }
    const chain = xnnpackCache().fullyConnectedChain(layers);
    // An operator that runs JavaScript never will run natively: stop trying. A cache that
    // is not finalized now may be at the next run.
    if (chain !== null || layers.some((layer) => layer.kernels !== 'native')) this.#chain = chain;
    return chain;
  }

  /** Drops the chain (the method was destroyed): the delegate runs node by node. */
  clear(): void {
    this.#chain = null;
  }
}

/**
 * Whether `graph` is fully-connected nodes in one line: node 0 reads the delegate's one
 * external input, node n node n - 1's output, and the last node's output is the one
 * external output.
 */
function isLayerLine(graph: XnnGraph): boolean {
  const count = graph.nodeCount;
  const flags = graph.valueFlags;
  const inputs = graph.inputIds.filter(
    (id) => ((flags[id] as number) & XNN_VALUE_FLAG_EXTERNAL_INPUT) !== 0,
  );
  if (count === 0 || inputs.length !== 1 || graph.nodeInput[0] !== inputs[0]) return false;
  for (let n = 0; n < count; n++) {
    if (graph.nodeType[n] !== XNODE_FULLY_CONNECTED) return false;
    if (n > 0 && graph.nodeInput[n] !== graph.nodeOutput[n - 1]) return false;
  }
  const output = graph.nodeOutput[count - 1] as number;
  if (graph.outputIds.length !== 1 || graph.outputIds[0] !== output) return false;
  for (let id = 0; id < graph.valueCount; id++) {
    const external = ((flags[id] as number) & XNN_VALUE_FLAG_EXTERNAL_OUTPUT) !== 0;
    if (external !== (id === output)) return false;
  }
  return true;
}

/** Whether each layer reads the channels the one before writes (the first: the input's). */
function channelsFollow(graph: XnnGraph, layers: readonly FullyConnectedOperator[]): boolean {
  let channels = dimOf(graph, graph.nodeInput[0] as number, -1);
  for (const layer of layers) {
    if (layer.inputChannels !== channels) return false;
    channels = layer.outputChannels;
  }
  return true;
}

// An XNNPACK delegate of an ExecuTorch program: its fully-connected operators found in (or
// packed into) the weights cache under the program's own keys, and its execution.
import type {
  FullyConnectedByNameOptions,
  FullyConnectedOperator,
  XNNWeightsCache,
} from '@memlayer/xnnpack-cache';
import { xnnpackCache } from '#deferred/xnnpack-cache';
import { describeValue, ModuleLoaderError } from '../errors.js';
import {
  XNN_INVALID_ID,
  XNN_VALUE_FLAG_EXTERNAL_INPUT,
  XNN_VALUE_FLAG_EXTERNAL_OUTPUT,
  XNODE_CLAMP,
  XNODE_FULLY_CONNECTED,
  type XnnGraph,
} from '../pte/xnn-graph.js';
import { geluExact } from './activations.js';
import type { Tensor } from './backend.js';
import type { DelegateChain } from './delegate-chain.js';
import type { IntermediateArena, NodeOutputs } from './intermediate-arena.js';
import { type LayerSettings, MethodOperators } from './method-operators.js';
import { dimOf } from './xnnpack-delegate-checks.js';
import { constantKey } from './xnnpack-delegate-data.js';
import { methodOptions, type OperatorSettings, type ReusedOptions } from './xnnpack-nodes.js';

/** Sets fully-connected node `n`'s shape and output range on `options`. */
function setLayer(options: ReusedOptions, graph: XnnGraph, n: number): ReusedOptions {
  const filter = graph.nodeFilter[n] as number;
  options.outputChannels = dimOf(graph, filter, 0);
  options.inputChannels = dimOf(graph, filter, 1);
  options.outputMin = graph.outputMin[n] as number;
  options.outputMax = graph.outputMax[n] as number;
  return options;
}

/**
 * Finds or packs each fully-connected node's weights through `cache`, named by the
 * program's keys (kernel key + bias key, as ExecuTorch's XNNWeightsCache names the entry).
 * A found layer's operator is made when first run.
 */
export function createDelegateOperators(
  cache: XNNWeightsCache,
  graph: XnnGraph,
  settings: OperatorSettings,
): { operators: MethodOperators; cacheHits: number } {
  const operators = new MethodOperators(
    graph.nodeCount,
    (n) => setLayer(methodOptions(cache, settings), graph, n) as LayerSettings,
  );
  // One options object serves every node: no look-up keeps it.
  const options = methodOptions(cache, settings);
  const { createMissedFullyConnectedNcF32ByName, findFullyConnectedNcF32ByName, NOT_FOUND } =
    xnnpackCache();
  let cacheHits = 0;
  for (let n = 0; n < graph.nodeCount; n++) {
    if (graph.nodeType[n] !== XNODE_FULLY_CONNECTED) continue;
    setLayer(options, graph, n);
    const bias = graph.nodeBias[n] as number;
    options.kernel = constantKey(graph, graph.nodeFilter[n] as number);
    options.bias = bias === XNN_INVALID_ID ? null : constantKey(graph, bias);
    const offset = findFullyConnectedNcF32ByName(options as FullyConnectedByNameOptions);
    if (offset !== NOT_FOUND) {
      operators.found(n, offset);
      cacheHits++;
      continue;
    }
    const operator = createMissedFullyConnectedNcF32ByName(options as FullyConnectedByNameOptions);
    operators.made(n, operator);
    if (operator.cacheHit) cacheHits++;
  }
  return { operators, cacheHits };
}

/**
 * Runs the delegate on its call's arguments (ExecuTorch passes the DelegateCall's args;
 * a value's external_id indexes them): reads the inputs, returns the arguments with the
 * outputs filled in. Inputs are [rows, features] f32 matrices, any number of rows. A line
 * of fully-connected layers runs as one native call through `chains` (null: node by node,
 * with the same bits).
 */
export function executeDelegate(
  graph: XnnGraph,
  operators: MethodOperators,
  intermediates: IntermediateArena,
  args: readonly (Tensor | undefined)[],
  chains: DelegateChain | null,
): (Tensor | undefined)[] {
  const values = new Array<Float32Array | undefined>(graph.valueCount);
  let rows = 0;
  // The input lengths decide every other length: the key of the run's planned outputs.
  let key = '';
  for (const id of graph.inputIds) {
    if (((graph.valueFlags[id] as number) & XNN_VALUE_FLAG_EXTERNAL_INPUT) === 0) continue;
    const tensor = args[graph.externalId[id] as number];
    const features = dimOf(graph, id, -1);
    const [tensorRows, columns] = Array.isArray(tensor?.shape) ? tensor.shape : [0, 0];
    if (
      !(tensor?.data instanceof Float32Array) ||
      columns !== features ||
      !Number.isInteger(tensorRows) ||
      tensorRows < 1 ||
      tensor.data.length !== tensorRows * columns
    ) {
      throw new ModuleLoaderError(
        'ERR_INVALID_INPUT',
        `Expected an f32 tensor [batch, ${features}] for input ${graph.externalId[id]} but received ${describeValue(tensor)}`,
      );
    }
    values[id] = tensor.data;
    rows = tensorRows;
    key += `${tensor.data.length},`;
  }
  const chain = chains === null ? null : chains.of(operators);
  if (chain !== null) {
    // One line of layers: its intermediates live in the chain's own scratch, and its
    // output, the delegate's, is a new array per run.
    const last = graph.nodeCount - 1;
    const input = values[graph.nodeInput[0] as number] as Float32Array;
    values[graph.nodeOutput[last] as number] = chain.run(input, rows);
  } else {
    const outputs = intermediates.outputs(key, () => nodeOutputs(graph, operators, values));
    runNodes(graph, operators, outputs, values);
  }
  const filled = [...args];
  for (const id of graph.outputIds) {
    const data = values[id] as Float32Array;
    const columns = dimOf(graph, id, -1);
    filled[graph.externalId[id] as number] = {
      shape: [data.length / columns || rows, columns],
      data,
    };
  }
  return filled;
}

/** Runs the delegate's nodes one by one, each writing its planned output. */
function runNodes(
  graph: XnnGraph,
  operators: MethodOperators,
  outputs: readonly Float32Array[],
  values: (Float32Array | undefined)[],
): void {
  for (let n = 0; n < graph.nodeCount; n++) {
    const input = values[graph.nodeInput[n] as number] as Float32Array;
    const output = outputs[n] as Float32Array;
    const type = graph.nodeType[n];
    if (type === XNODE_FULLY_CONNECTED) {
      const operator = operators.get(n) as FullyConnectedOperator;
      operator.run(input, input.length / operator.inputChannels, output);
    } else if (type === XNODE_CLAMP) {
      clamp(input, graph.outputMin[n] as number, graph.outputMax[n] as number, output);
    } else {
      output.set(input);
      geluExact(output);
    }
    values[graph.nodeOutput[n] as number] = output;
  }
}

/** Each node's output: its length, whether it is the delegate's, which node reads it last. */
function nodeOutputs(
  graph: XnnGraph,
  operators: MethodOperators,
  inputs: readonly (Float32Array | undefined)[],
): NodeOutputs {
  const lengths = new Float64Array(graph.valueCount);
  for (let id = 0; id < inputs.length; id++) lengths[id] = inputs[id]?.length ?? 0;
  // The node that wrote each value last, -1 for none (an input of the delegate).
  const writer = new Int32Array(graph.valueCount).fill(-1);
  const nodes = { lengths: [] as number[], external: [] as boolean[], lastUses: [] as number[] };
  for (let n = 0; n < graph.nodeCount; n++) {
    const input = graph.nodeInput[n] as number;
    const inputLength = lengths[input] as number;
    const from = writer[input] as number;
    if (from >= 0) nodes.lastUses[from] = n;
    const id = graph.nodeOutput[n] as number;
    let length = inputLength;
    if (graph.nodeType[n] === XNODE_FULLY_CONNECTED) {
      const operator = operators.get(n) as FullyConnectedOperator;
      length = (inputLength / operator.inputChannels) * operator.outputChannels;
    }
    lengths[id] = length;
    writer[id] = n;
    nodes.lengths.push(length);
    nodes.external.push(((graph.valueFlags[id] as number) & XNN_VALUE_FLAG_EXTERNAL_OUTPUT) !== 0);
    nodes.lastUses.push(n);
  }
  return nodes;
}

function clamp(input: Float32Array, min: number, max: number, output: Float32Array): void {
  for (let i = 0; i < input.length; i++) {
    const x = input[i] as number;
    output[i] = Math.min(Math.max(x, min), max);
  }
}

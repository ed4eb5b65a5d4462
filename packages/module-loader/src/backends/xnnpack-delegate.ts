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
  XNODE_CLAMP,
  XNODE_FULLY_CONNECTED,
  type XnnGraph,
} from '../pte/xnn-graph.js';
import { geluExact } from './activations.js';
import type { Tensor } from './backend.js';
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
 * outputs filled in. Inputs are [rows, features] f32 matrices, any number of rows.
 */
export function executeDelegate(
  graph: XnnGraph,
  operators: MethodOperators,
  args: readonly (Tensor | undefined)[],
): (Tensor | undefined)[] {
  const values = new Array<Float32Array | undefined>(graph.valueCount);
  let rows = 0;
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
  }
  for (let n = 0; n < graph.nodeCount; n++) {
    const input = values[graph.nodeInput[n] as number] as Float32Array;
    const type = graph.nodeType[n];
    let output: Float32Array;
    if (type === XNODE_FULLY_CONNECTED) {
      const operator = operators.get(n) as FullyConnectedOperator;
      const batch = input.length / operator.inputChannels;
      output = operator.run(input, batch, new Float32Array(batch * operator.outputChannels));
    } else if (type === XNODE_CLAMP) {
      output = clamp(input, graph.outputMin[n] as number, graph.outputMax[n] as number);
    } else {
      output = geluExact(Float32Array.from(input));
    }
    values[graph.nodeOutput[n] as number] = output;
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

function clamp(input: Float32Array, min: number, max: number): Float32Array {
  const output = new Float32Array(input.length);
  for (let i = 0; i < input.length; i++) {
    const x = input[i] as number;
    output[i] = Math.min(Math.max(x, min), max);
  }
  return output;
}

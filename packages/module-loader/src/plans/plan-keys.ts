import { resolve } from 'node:path';
import { NodeKeyColumns } from '../backends/node-keys.js';
import type { GraphMethodManifest, GraphNode } from '../program/manifest.js';
import type { LoadedProgram } from '../program/program.js';
import { isEntryName } from '../safetensors/digest.js';
import { trustworthy } from '../safetensors/known-files.js';
import { isFeatureCount, type MethodPlan, type PlannedWeightFile } from './plan-codec.js';
import type { PlannedDataMap } from './planned-data-map.js';

const ONE = 49; // '1'

/**
 * A method's keys as its plan gives them: one entry name per linear node, which the cache
 * looks up as it is; `map` serves the planned tensors from the keys split out of them (in
 * the order the cache asks for them: kernel, then bias, node by node). Undefined when the
 * plan does not fit the graph (node count, linear nodes, biases, an entry name's shape):
 * then it is not used.
 */
export function keysFromPlan(
  plan: MethodPlan,
  method: GraphMethodManifest,
  map: PlannedDataMap,
): NodeKeyColumns | undefined {
  const graph = method.graph;
  if (plan.nodes !== graph.length) return undefined;
  const names = new Array<string | undefined>(graph.length);
  const outFeatures = new Int32Array(graph.length);
  const inFeatures = new Int32Array(graph.length);
  const { hasBias, entryNames } = plan;
  let linear = 0;
  for (let index = 0; index < graph.length; index++) {
    const node = graph[index] as GraphNode;
    if (node.op !== 'linear') continue;
    const withBias = node.bias !== undefined;
    if (linear >= hasBias.length || (hasBias.charCodeAt(linear) === ONE) !== withBias) {
      return undefined;
    }
    const out = plan.features[2 * linear];
    const inputs = plan.features[2 * linear + 1];
    const name = entryNames[linear] as string;
    if (!isFeatureCount(out) || !isFeatureCount(inputs) || !isEntryName(name, withBias)) {
      return undefined;
    }
    names[index] = name;
    outFeatures[index] = out;
    inFeatures[index] = inputs;
    linear++;
  }
  if (linear !== hasBias.length) return undefined;
  const columns = new NodeKeyColumns(null, null, linear, outFeatures, inFeatures, names);
  map.plan(method, columns);
  return columns;
}

/**
 * The plan of a method whose nodes were just checked and keyed (content keys) against
 * `program`'s weights, or undefined when a weight file is not settled enough to be trusted
 * by identity later (modified within the racy window before it was read): no plan then.
 */
export function planFrom(
  program: LoadedProgram,
  methodName: string,
  method: GraphMethodManifest,
  keys: NodeKeyColumns,
): MethodPlan | undefined {
  const weights: PlannedWeightFile[] = [];
  for (const file of program.namedData.files) {
    if (!file.isKnown) return undefined;
    const known = file.describe();
    if (!trustworthy(known, file.identity)) return undefined;
    weights.push({ identity: file.identity, readAtNs: known.readAtNs });
  }
  const features: number[] = [];
  const entryNames: string[] = [];
  let hasBias = '';
  for (let index = 0; index < method.graph.length; index++) {
    const kernel = keys.kernels[index];
    if (kernel === undefined) continue;
    const bias = keys.biases[index] ?? null;
    features.push(keys.outFeatures[index] as number, keys.inFeatures[index] as number);
    // The name the cache gives the pair's entry (ExecuTorch's: kernel name + bias name).
    entryNames.push(bias === null ? kernel : kernel + bias);
    hasBias += bias === null ? '0' : '1';
  }
  return {
    program: resolve(program.path),
    method: methodName,
    manifestDigest: program.manifestDigest,
    manifestFile: program.manifestFile,
    weights,
    nodes: method.graph.length,
    features,
    hasBias,
    entryNames,
  };
}

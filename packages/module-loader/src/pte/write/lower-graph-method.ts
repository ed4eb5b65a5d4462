import type { TensorView } from '@memlayer/xnnpack-cache';
import { ModuleLoaderError } from '../../errors.js';
import type { GraphMethodManifest, GraphNode } from '../../program/manifest.js';
import { reluFusions } from './fused-activations.js';
import type { NamedDataEntry } from './pte-description.js';
import {
  XNN_INVALID_VALUE_ID,
  XNODE_UNION_TYPE,
  type XnnGraphDescription,
  type XnnNodeDescription,
  type XnnOutputMinMax,
} from './xnn-graph-description.js';
import { XnnValueTable } from './xnn-value-table.js';

/** An export traces one example input: batch 1. */
export const EXPORT_BATCH = 1;

export interface LoweredGraphMethod {
  /** The whole method as one XNNPACK graph. */
  graph: XnnGraphDescription;
  /** Features of each method input, then of each method output (the DelegateCall args). */
  externalFeatures: number[];
  /** How many of externalFeatures are inputs. */
  inputCount: number;
  /** Constants the graph names, keyed by the hex SHA-256 of their bytes. */
  constants: NamedDataEntry[];
}

export interface LoweringContext {
  /** The manifest, for errors. */
  file: string;
  method: string;
  tensor(name: string): TensorView | undefined;
}

/**
 * Lowers a graph method the way backends/xnnpack/xnnpack_preprocess.py would lower its
 * exported graph: values are defined when a node first needs them (the inputs first here,
 * so every external id has a value), a relu after a linear is fused into it
 * (_passes/fuse_activation_pass.py), a remaining relu is an XNNClamp {0, +inf}
 * (operators/op_relu.py) and gelu an XNNGelu (operators/op_gelu.py).
 */
export function lowerGraphMethod(
  manifest: GraphMethodManifest,
  context: LoweringContext,
): LoweredGraphMethod {
  const path = `methods.${context.method}`;
  const fail = (field: string, message: string): never => {
    throw new ModuleLoaderError('ERR_MANIFEST_INVALID', `${context.file}: ${field}: ${message}`, {
      file: context.file,
      field,
    });
  };
  const inputCount = manifest.inputs.length;
  const inputNames = new Set(manifest.inputs.map((input) => input.name));
  const externalIdOfOutput = new Map<string, number>();
  manifest.outputs.forEach((output, index) => {
    // XNNPACK gives a value one external id: not an input and an output, nor two outputs.
    if (inputNames.has(output) || externalIdOfOutput.has(output)) {
      fail(`${path}.outputs[${index}]`, `"${output}" is an input or an earlier output`);
    }
    externalIdOfOutput.set(output, inputCount + index);
  });
  const table = new XnnValueTable(inputCount);
  for (const [index, input] of manifest.inputs.entries()) {
    table.defineActivation(input.name, [EXPORT_BATCH, input.features], index);
  }
  const constant = (name: string, field: string, dims: number[]): number => {
    const tensor = context.tensor(name) ?? fail(field, `no f32 tensor "${name}" in the weights`);
    if (tensor.shape.length !== dims.length || tensor.shape.some((size, i) => size !== dims[i])) {
      fail(field, `tensor "${name}" has shape [${tensor.shape}], expected [${dims}]`);
    }
    return table.defineConstant(name, dims, tensor.data);
  };

  const fusions = reluFusions(manifest);
  const reluOfLinear = new Map<number, number>();
  for (const [relu, linear] of fusions) reluOfLinear.set(linear, relu);
  const nodes: XnnNodeDescription[] = [];
  for (const [index, node] of manifest.graph.entries()) {
    if (fusions.has(index)) continue;
    const field = `${path}.graph[${index}]`;
    const input = table.id(node.input) as number;
    const inFeatures = table.features(node.input) as number;
    // A fused relu's output is the linear's (fuse_activation_pass.py replace_all_uses_with).
    const relu = reluOfLinear.get(index);
    const outputName =
      relu === undefined ? node.output : (manifest.graph[relu] as GraphNode).output;
    const defineOutput = (features: number) =>
      table.defineActivation(
        outputName,
        [EXPORT_BATCH, features],
        externalIdOfOutput.get(outputName),
      );
    if (node.op === 'linear') {
      const outFeatures =
        context.tensor(node.weight)?.shape[0] ??
        fail(`${field}.weight`, `no f32 tensor "${node.weight}" in the weights`);
      // backends/xnnpack/operators/op_linear.py: input, filter [out, in], bias, then output.
      const filter = constant(node.weight, `${field}.weight`, [outFeatures, inFeatures]);
      const bias =
        node.bias === undefined
          ? XNN_INVALID_VALUE_ID
          : constant(node.bias, `${field}.bias`, [outFeatures]);
      const output = defineOutput(outFeatures);
      const fc: XnnNodeDescription = {
        kind: 'fullyConnected',
        input1: input,
        filter,
        bias,
        output,
      };
      const minMax = linearMinMax(node, relu !== undefined);
      if (minMax !== undefined) fc.outputMinMax = minMax;
      nodes.push(fc);
    } else if (node.op === 'relu') {
      const output = defineOutput(inFeatures);
      const outputMinMax = { min: 0, max: Number.POSITIVE_INFINITY };
      nodes.push({ kind: 'node1x1', type: XNODE_UNION_TYPE.clamp, input, output, outputMinMax });
    } else {
      const output = defineOutput(inFeatures);
      nodes.push({ kind: 'node1x1', type: XNODE_UNION_TYPE.gelu, input, output });
    }
  }

  return {
    graph: {
      // backends/xnnpack/xnnpack_preprocess.py: XNNGraph(version="0", ...).
      version: '0',
      values: table.values,
      nodes,
      numExterns: inputCount + manifest.outputs.length,
      inputIds: table.inputIds,
      outputIds: table.outputIds,
      constantData: table.constantData,
    },
    externalFeatures: [
      ...manifest.inputs.map((input) => input.features),
      ...manifest.outputs.map((output) => table.features(output) as number),
    ],
    inputCount,
    constants: table.constants,
  };
}

/**
 * A linear node's own clamp bounds, then a fused relu on top of them:
 * relu(clamp(x, lo, hi)) = clamp(x, max(lo, 0), max(hi, 0)).
 */
function linearMinMax(
  node: Extract<GraphNode, { op: 'linear' }>,
  fusedRelu: boolean,
): XnnOutputMinMax | undefined {
  const min = node.outputMin ?? Number.NEGATIVE_INFINITY;
  const max = node.outputMax ?? Number.POSITIVE_INFINITY;
  if (fusedRelu) return { min: Math.max(min, 0), max: Math.max(max, 0) };
  if (node.outputMin === undefined && node.outputMax === undefined) return undefined;
  return { min, max };
}

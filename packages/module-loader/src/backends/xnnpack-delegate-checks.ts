// What of an XNNPACK delegate this backend can run: fully-connected nodes over f32 constant
// weights (with their fused output min/max), clamps and GELU, on f32 values.
import {
  XNN_DATATYPE_FP32,
  XNN_INVALID_ID,
  XNN_VALUE_FLAG_EXTERNAL_INPUT,
  XNODE_CLAMP,
  XNODE_FULLY_CONNECTED,
  XNODE_GELU,
  type XnnGraph,
  xnodeName,
} from '../pte/xnn-graph.js';

/** A value's rank and its dimension `d` (from the end when d < 0). */
export function rankOf(graph: XnnGraph, value: number): number {
  return (graph.dimStart[value + 1] as number) - (graph.dimStart[value] as number);
}

export function dimOf(graph: XnnGraph, value: number, d: number): number {
  const rank = rankOf(graph, value);
  return graph.dims[(graph.dimStart[value] as number) + (d < 0 ? rank + d : d)] as number;
}

/**
 * Every reason this delegate cannot run here, one line each naming the node ("XNNSoftmax
 * (node 3)"); empty when it can run. Nothing is allocated for a delegate that has one.
 * A delegate's nodes are checked while its code runs cold (once per load): the value facts
 * are read once into local arrays, not through a helper call per fact.
 */
export function delegateProblems(graph: XnnGraph): string[] {
  const problems: string[] = [];
  const { valueCount, valueFlags, constantIndex, datatype, quantized } = graph;
  // Values defined so far: external inputs, constants, then each node's output.
  const defined = new Uint8Array(valueCount);
  const f32 = new Uint8Array(valueCount);
  for (let v = 0; v < valueCount; v++) {
    const external = ((valueFlags[v] as number) & XNN_VALUE_FLAG_EXTERNAL_INPUT) !== 0;
    f32[v] = datatype[v] === XNN_DATATYPE_FP32 && quantized[v] === 0 ? 1 : 0;
    if (external || constantIndex[v] !== 0) defined[v] = 1;
    if (external && f32[v] === 0)
      problems.push(`input value ${v} of datatype ${datatype[v]} (only f32 runs here)`);
  }
  const { nodeCount, nodeType, nodeInput, nodeOutput } = graph;
  for (let n = 0; n < nodeCount; n++) {
    const type = nodeType[n] as number;
    const input = nodeInput[n] as number;
    const output = nodeOutput[n] as number;
    if (type !== XNODE_FULLY_CONNECTED && type !== XNODE_CLAMP && type !== XNODE_GELU) {
      problems.push(nodeName(graph, n));
      continue;
    }
    if (defined[input] !== 1)
      problems.push(`${nodeName(graph, n)} reads value ${input} before it is computed`);
    if (f32[input] === 0 || f32[output] === 0)
      problems.push(`${nodeName(graph, n)} on values that are not f32`);
    if (type === XNODE_FULLY_CONNECTED) addFullyConnectedProblems(graph, f32, n, problems);
    defined[output] = 1;
  }
  return problems;
}

/** "XNNSoftmax (node 3)", made only for a message: a string per node costs more than its checks. */
function nodeName(graph: XnnGraph, n: number): string {
  return `${xnodeName(graph.nodeType[n] as number)} (node ${n})`;
}

/** Node `n`'s filter [out, in], bias [out], input [..., in], flags and range, checked. */
function addFullyConnectedProblems(
  graph: XnnGraph,
  f32: Uint8Array,
  n: number,
  problems: string[],
): void {
  const { dimStart, dims, constantIndex } = graph;
  const filter = graph.nodeFilter[n] as number;
  const bias = graph.nodeBias[n] as number;
  const input = graph.nodeInput[n] as number;
  if (graph.nodeFlags[n] !== 0)
    problems.push(`${nodeName(graph, n)} with flags ${graph.nodeFlags[n]}`);
  const filterAt = dimStart[filter] as number;
  if (
    constantIndex[filter] === 0 ||
    f32[filter] === 0 ||
    (dimStart[filter + 1] as number) - filterAt !== 2
  ) {
    problems.push(`${nodeName(graph, n)} whose filter is not an f32 constant [out, in]`);
    return;
  }
  const outputs = dims[filterAt] as number;
  const inputs = dims[filterAt + 1] as number;
  const inputEnd = dimStart[input + 1] as number;
  if (inputEnd - (dimStart[input] as number) < 1 || dims[inputEnd - 1] !== inputs) {
    problems.push(
      `${nodeName(graph, n)}: input features do not match the filter's [${outputs}, ${inputs}]`,
    );
  }
  if (bias !== XNN_INVALID_ID) {
    const biasAt = dimStart[bias] as number;
    if (
      constantIndex[bias] === 0 ||
      f32[bias] === 0 ||
      (dimStart[bias + 1] as number) - biasAt !== 1 ||
      dims[biasAt] !== outputs
    ) {
      problems.push(`${nodeName(graph, n)} whose bias is not an f32 constant [${outputs}]`);
    }
  }
  if (!((graph.outputMin[n] as number) <= (graph.outputMax[n] as number))) {
    problems.push(
      `${nodeName(graph, n)} with output min ${graph.outputMin[n]} above max ${graph.outputMax[n]}`,
    );
  }
}

/** Whether any constant of the graph is named data (rather than bytes of the payload). */
export function hasNamedConstants(graph: XnnGraph): boolean {
  for (let index = 1; index < graph.constantCount; index++) {
    if (graph.constantKey(index) !== null) return true;
  }
  return false;
}

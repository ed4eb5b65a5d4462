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

function isF32(graph: XnnGraph, value: number): boolean {
  return graph.datatype[value] === XNN_DATATYPE_FP32 && graph.quantized[value] === 0;
}

/**
 * Every reason this delegate cannot run here, one line each naming the node ("XNNSoftmax
 * (node 3)"); empty when it can run. Nothing is allocated for a delegate that has one.
 */
export function delegateProblems(graph: XnnGraph): string[] {
  const problems: string[] = [];
  // Values defined so far: external inputs, constants, then each node's output.
  const defined = new Uint8Array(graph.valueCount);
  for (let v = 0; v < graph.valueCount; v++) {
    const external = ((graph.valueFlags[v] as number) & XNN_VALUE_FLAG_EXTERNAL_INPUT) !== 0;
    if (external || graph.constantIndex[v] !== 0) defined[v] = 1;
    if (external && !isF32(graph, v))
      problems.push(`input value ${v} of datatype ${graph.datatype[v]} (only f32 runs here)`);
  }
  for (let n = 0; n < graph.nodeCount; n++) {
    const type = graph.nodeType[n] as number;
    const input = graph.nodeInput[n] as number;
    const output = graph.nodeOutput[n] as number;
    if (type !== XNODE_FULLY_CONNECTED && type !== XNODE_CLAMP && type !== XNODE_GELU) {
      problems.push(nodeName(graph, n));
      continue;
    }
    if (defined[input] !== 1)
      problems.push(`${nodeName(graph, n)} reads value ${input} before it is computed`);
    if (!isF32(graph, input) || !isF32(graph, output))
      problems.push(`${nodeName(graph, n)} on values that are not f32`);
    if (type === XNODE_FULLY_CONNECTED) addFullyConnectedProblems(graph, n, problems);
    defined[output] = 1;
  }
  return problems;
}

/** "XNNSoftmax (node 3)", made only for a message: a string per node costs more than its checks. */
function nodeName(graph: XnnGraph, n: number): string {
  return `${xnodeName(graph.nodeType[n] as number)} (node ${n})`;
}

function addFullyConnectedProblems(graph: XnnGraph, n: number, problems: string[]): void {
  const filter = graph.nodeFilter[n] as number;
  const bias = graph.nodeBias[n] as number;
  const input = graph.nodeInput[n] as number;
  if (graph.nodeFlags[n] !== 0)
    problems.push(`${nodeName(graph, n)} with flags ${graph.nodeFlags[n]}`);
  if (graph.constantIndex[filter] === 0 || !isF32(graph, filter) || rankOf(graph, filter) !== 2) {
    problems.push(`${nodeName(graph, n)} whose filter is not an f32 constant [out, in]`);
    return;
  }
  if (rankOf(graph, input) < 1 || dimOf(graph, input, -1) !== dimOf(graph, filter, 1)) {
    problems.push(
      `${nodeName(graph, n)}: input features do not match the filter's [${dimOf(graph, filter, 0)}, ${dimOf(graph, filter, 1)}]`,
    );
  }
  if (
    bias !== XNN_INVALID_ID &&
    (graph.constantIndex[bias] === 0 ||
      !isF32(graph, bias) ||
      rankOf(graph, bias) !== 1 ||
      dimOf(graph, bias, 0) !== dimOf(graph, filter, 0))
  ) {
    problems.push(
      `${nodeName(graph, n)} whose bias is not an f32 constant [${dimOf(graph, filter, 0)}]`,
    );
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

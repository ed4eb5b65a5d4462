import { ModuleLoaderError } from '../errors.js';
import { findJsonShapeProblem, MAX_JSON_CONTAINERS, MAX_JSON_DEPTH } from './json-shape.js';

/** `format` value every manifest carries, so a stray JSON file is not taken for a program. */
export const PROGRAM_FORMAT = 'memlayer-program';
export const PROGRAM_VERSION = 1;
/** Bounds on untrusted manifests: names are map keys, graphs are walked in full. */
export const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;
export const MAX_METHODS = 1024;
export const MAX_GRAPH_NODES = 100_000;
export const MAX_NAME_LENGTH = 256;

export type CompileSpecValue = boolean | number | string;

export type GraphNode =
  | {
      op: 'linear';
      input: string;
      output: string;
      weight: string;
      bias?: string;
      /** Clamp bounds of the outputs (XNNPACK's output_min/output_max); absent = none. */
      outputMin?: number;
      outputMax?: number;
    }
  | { op: 'relu' | 'gelu'; input: string; output: string };

export interface MethodInput {
  name: string;
  /** Inputs are [batch, features] f32 matrices; the batch is chosen at execute time. */
  features: number;
}

export interface GraphMethodManifest {
  kind: 'graph';
  backend: string;
  compileSpecs: Record<string, CompileSpecValue>;
  inputs: MethodInput[];
  outputs: string[];
  graph: GraphNode[];
}

export interface CallableMethodManifest {
  kind: 'callable';
  backend: string;
  compileSpecs: Record<string, CompileSpecValue>;
  /** Path of a ChipCallable file, relative to the manifest. */
  callable: string;
  callableId: number;
  orchestration: 'device' | 'host';
}

export type MethodManifest = GraphMethodManifest | CallableMethodManifest;

export interface ProgramManifest {
  version: number;
  /** safetensors files (relative to the manifest) that together form the named data map. */
  weights: string[];
  methods: Map<string, MethodManifest>;
}

/** Parses and validates a program manifest; every error names the file and JSON path. */
export function parseManifest(text: string, file: string): ProgramManifest {
  if (text.length > MAX_MANIFEST_BYTES)
    fail(file, '$', `manifest is larger than ${MAX_MANIFEST_BYTES} bytes`);
  const shape = findJsonShapeProblem(text);
  if (shape !== null) {
    fail(
      file,
      '$',
      shape.kind === 'depth'
        ? `nested deeper than ${MAX_JSON_DEPTH} levels (at character ${shape.offset})`
        : `more than ${MAX_JSON_CONTAINERS} objects and arrays (at character ${shape.offset})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return fail(file, '$', `not valid JSON (${(error as Error).message})`);
  }
  const root = expectObject(json, file, '$');
  if (root['format'] !== PROGRAM_FORMAT) fail(file, 'format', `expected "${PROGRAM_FORMAT}"`);
  if (root['version'] !== PROGRAM_VERSION) {
    fail(
      file,
      'version',
      `expected ${PROGRAM_VERSION} but received ${JSON.stringify(root['version'])}`,
    );
  }
  const weightsJson = expectArray(root['weights'] ?? [], file, 'weights');
  const weights: string[] = [];
  for (let index = 0; index < weightsJson.length; index++) {
    const weight = weightsJson[index];
    if (!isName(weight)) fail(file, `weights[${index}]`, NAME_EXPECTED);
    weights.push(weight);
  }
  const methodsJson = expectObject(root['methods'], file, 'methods');
  const methodNames = Object.keys(methodsJson);
  if (methodNames.length === 0) fail(file, 'methods', 'a program needs at least one method');
  if (methodNames.length > MAX_METHODS) fail(file, 'methods', `more than ${MAX_METHODS} methods`);
  const methods = new Map<string, MethodManifest>();
  for (const name of methodNames) {
    expectName(name, file, `methods["${name.slice(0, 32)}"]`);
    methods.set(name, parseMethod(methodsJson[name], file, `methods.${name}`));
  }
  return { version: PROGRAM_VERSION, weights, methods };
}

function parseMethod(raw: unknown, file: string, path: string): MethodManifest {
  const method = expectObject(raw, file, path);
  const backend = expectName(method['backend'], file, `${path}.backend`);
  const compileSpecs = parseCompileSpecs(
    method['compileSpecs'] ?? {},
    file,
    `${path}.compileSpecs`,
  );
  if (method['callable'] !== undefined) {
    const callableId = method['callableId'];
    if (!Number.isInteger(callableId) || (callableId as number) < 0) {
      fail(file, `${path}.callableId`, 'expected a non-negative integer');
    }
    const orchestration = method['orchestration'] ?? 'device';
    if (orchestration !== 'device' && orchestration !== 'host') {
      fail(file, `${path}.orchestration`, 'expected "device" or "host"');
    }
    return {
      kind: 'callable',
      backend,
      compileSpecs,
      callable: expectName(method['callable'], file, `${path}.callable`),
      callableId: callableId as number,
      orchestration: orchestration as 'device' | 'host',
    };
  }
  const inputsJson = expectArray(method['inputs'], file, `${path}.inputs`);
  const inputs: MethodInput[] = [];
  // Values defined so far: the inputs, then each node's output in graph order.
  const defined = new Set<string>();
  for (let index = 0; index < inputsJson.length; index++) {
    const input = expectObject(inputsJson[index], file, `${path}.inputs[${index}]`);
    const features = input['features'];
    if (!Number.isInteger(features) || (features as number) < 1 || (features as number) > 2 ** 24) {
      fail(file, `${path}.inputs[${index}].features`, 'expected an integer in [1, 2^24]');
    }
    const name = expectName(input['name'], file, `${path}.inputs[${index}].name`);
    inputs.push({ name, features: features as number });
    defined.add(name);
  }
  if (inputs.length === 0) fail(file, `${path}.inputs`, 'a graph method needs at least one input');
  const graphJson = expectArray(method['graph'], file, `${path}.graph`);
  if (graphJson.length > MAX_GRAPH_NODES)
    fail(file, `${path}.graph`, `more than ${MAX_GRAPH_NODES} nodes`);
  const graph = parseGraph(graphJson, defined, file, path);
  const outputsJson = expectArray(method['outputs'], file, `${path}.outputs`);
  const outputs: string[] = [];
  for (let index = 0; index < outputsJson.length; index++) {
    const output = expectName(outputsJson[index], file, `${path}.outputs[${index}]`);
    if (!defined.has(output))
      fail(file, `${path}.outputs[${index}]`, `value "${output}" is never computed`);
    outputs.push(output);
  }
  if (outputs.length === 0)
    fail(file, `${path}.outputs`, 'a graph method needs at least one output');
  return { kind: 'graph', backend, compileSpecs, inputs, outputs, graph };
}

/**
 * Checks the nodes in one pass: each node's shape, op, names and clamp bounds, then its use
 * of values (`defined` gains each output). A node that holds just the fields of a GraphNode
 * is kept as JSON.parse made it (a copy per node was a third of the parse's garbage at
 * 16384 nodes); one with other keys or clamp bounds (`output_min` becomes `outputMin`) is
 * copied field by field. Graphs run to 100k nodes, so the loop builds no strings, closures
 * or arrays unless a node is refused: JSON paths are written only for the error.
 */
function parseGraph(
  graphJson: unknown[],
  defined: Set<string>,
  file: string,
  path: string,
): GraphNode[] {
  const graph = new Array<GraphNode>(graphJson.length);
  // Output of the node before: in a chain it is this node's input, found without hashing.
  let previous: unknown;
  for (let index = 0; index < graphJson.length; index++) {
    const raw = graphJson[index];
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      failNode(file, path, index, '', 'expected an object');
    }
    const node = raw as Record<string, unknown>;
    const op = node['op'];
    const isLinear = op === 'linear';
    if (!isLinear && op !== 'relu' && op !== 'gelu') {
      failNode(
        file,
        path,
        index,
        '.op',
        `expected one of ${GRAPH_OPS} but received ${JSON.stringify(op)}`,
      );
    }
    const input = node['input'];
    if (!isName(input)) failNode(file, path, index, '.input', NAME_EXPECTED);
    const output = node['output'];
    if (!isName(output)) failNode(file, path, index, '.output', NAME_EXPECTED);
    let parsed: GraphNode;
    if (isLinear) {
      const weight = node['weight'];
      if (!isName(weight)) failNode(file, path, index, '.weight', NAME_EXPECTED);
      const bias = node['bias'];
      if (bias !== undefined && !isName(bias)) failNode(file, path, index, '.bias', NAME_EXPECTED);
      const outputMin = node['output_min'];
      const outputMax = node['output_max'];
      const fields = bias === undefined ? 4 : 5;
      if (outputMin === undefined && outputMax === undefined && keyCount(node) === fields) {
        parsed = node as GraphNode;
      } else {
        parsed =
          bias === undefined
            ? { op: 'linear', input, output, weight }
            : { op: 'linear', input, output, weight, bias };
        if (outputMin !== undefined || outputMax !== undefined) {
          checkClamp(outputMin, outputMax, file, path, index);
          if (outputMin !== undefined) parsed.outputMin = outputMin as number;
          if (outputMax !== undefined) parsed.outputMax = outputMax as number;
        }
      }
    } else {
      parsed =
        keyCount(node) === 3 ? (node as GraphNode) : { op: op as 'relu' | 'gelu', input, output };
    }
    if (input !== previous && !defined.has(input)) {
      failNode(file, path, index, '.input', `value "${input}" is not defined before this node`);
    }
    // One hash operation checks and records the output: a known value leaves the size as is.
    const size = defined.size;
    defined.add(output);
    if (defined.size === size) {
      failNode(file, path, index, '.output', `value "${output}" is defined twice`);
    }
    previous = output;
    graph[index] = parsed;
  }
  return graph;
}

/** Both bounds numbers (not NaN) when present; XNNPACK refuses min > max (xnn_status_invalid_parameter). */
function checkClamp(
  outputMin: unknown,
  outputMax: unknown,
  file: string,
  path: string,
  index: number,
): void {
  if (outputMin !== undefined && !isNumber(outputMin))
    failNode(file, path, index, '.output_min', 'expected a number');
  if (outputMax !== undefined && !isNumber(outputMax))
    failNode(file, path, index, '.output_max', 'expected a number');
  if (
    outputMin !== undefined &&
    outputMax !== undefined &&
    (outputMin as number) > (outputMax as number)
  ) {
    failNode(
      file,
      path,
      index,
      '.output_min',
      `expected at most output_max (${outputMax}) but received ${outputMin}`,
    );
  }
}

function parseCompileSpecs(
  raw: unknown,
  file: string,
  path: string,
): Record<string, CompileSpecValue> {
  const specs = expectObject(raw, file, path);
  const out: Record<string, CompileSpecValue> = {};
  for (const [key, value] of Object.entries(specs)) {
    if (typeof value !== 'boolean' && typeof value !== 'number' && typeof value !== 'string') {
      fail(file, `${path}.${key}`, 'expected a boolean, number or string');
    }
    out[key] = value as CompileSpecValue;
  }
  return out;
}

const GRAPH_OPS = 'linear, relu, gelu';
const NAME_EXPECTED = `expected a string of 1..${MAX_NAME_LENGTH} characters`;

function fail(file: string, field: string, message: string): never {
  throw new ModuleLoaderError('ERR_MANIFEST_INVALID', `${file}: ${field}: ${message}`, {
    file,
    field,
  });
}

/** `key` is '' or '.<key>' of node `index` of the graph at `path`. */
function failNode(file: string, path: string, index: number, key: string, message: string): never {
  return fail(file, `${path}.graph[${index}]${key}`, message);
}

/** The number of own enumerable keys of a parsed JSON object (no array is made). */
function keyCount(object: Record<string, unknown>): number {
  let count = 0;
  for (const _ in object) count++;
  return count;
}

function isName(value: unknown): value is string {
  return typeof value === 'string' && value.length !== 0 && value.length <= MAX_NAME_LENGTH;
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && !Number.isNaN(value);
}

function expectObject(value: unknown, file: string, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail(file, path, 'expected an object');
  }
  return value as Record<string, unknown>;
}

function expectArray(value: unknown, file: string, path: string): unknown[] {
  if (!Array.isArray(value)) return fail(file, path, 'expected an array');
  return value;
}

function expectName(value: unknown, file: string, path: string): string {
  if (!isName(value)) return fail(file, path, NAME_EXPECTED);
  return value;
}

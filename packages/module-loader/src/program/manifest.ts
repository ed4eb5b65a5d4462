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

const GRAPH_OPS = new Set(['linear', 'relu', 'gelu']);

/** Parses and validates a program manifest; every error names the file and JSON path. */
export function parseManifest(text: string, file: string): ProgramManifest {
  const fail = (field: string, message: string): never => {
    throw new ModuleLoaderError('ERR_MANIFEST_INVALID', `${file}: ${field}: ${message}`, {
      file,
      field,
    });
  };
  if (text.length > MAX_MANIFEST_BYTES)
    fail('$', `manifest is larger than ${MAX_MANIFEST_BYTES} bytes`);
  const shape = findJsonShapeProblem(text);
  if (shape !== null) {
    fail(
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
    return fail('$', `not valid JSON (${(error as Error).message})`);
  }
  const root = expectObject(json, '$', fail);
  if (root['format'] !== PROGRAM_FORMAT) fail('format', `expected "${PROGRAM_FORMAT}"`);
  if (root['version'] !== PROGRAM_VERSION) {
    fail('version', `expected ${PROGRAM_VERSION} but received ${JSON.stringify(root['version'])}`);
  }
  const weights = expectArray(root['weights'] ?? [], 'weights', fail).map((entry, index) =>
    expectName(entry, `weights[${index}]`, fail),
  );
  const methodsJson = expectObject(root['methods'], 'methods', fail);
  const methodNames = Object.keys(methodsJson);
  if (methodNames.length === 0) fail('methods', 'a program needs at least one method');
  if (methodNames.length > MAX_METHODS) fail('methods', `more than ${MAX_METHODS} methods`);
  const methods = new Map<string, MethodManifest>();
  for (const name of methodNames) {
    expectName(name, `methods["${name.slice(0, 32)}"]`, fail);
    methods.set(name, parseMethod(methodsJson[name], `methods.${name}`, fail));
  }
  return { version: PROGRAM_VERSION, weights, methods };
}

type Fail = (field: string, message: string) => never;

function parseMethod(raw: unknown, path: string, fail: Fail): MethodManifest {
  const method = expectObject(raw, path, fail);
  const backend = expectName(method['backend'], `${path}.backend`, fail);
  const compileSpecs = parseCompileSpecs(
    method['compileSpecs'] ?? {},
    `${path}.compileSpecs`,
    fail,
  );
  if (method['callable'] !== undefined) {
    const callableId = method['callableId'];
    if (!Number.isInteger(callableId) || (callableId as number) < 0) {
      fail(`${path}.callableId`, 'expected a non-negative integer');
    }
    const orchestration = method['orchestration'] ?? 'device';
    if (orchestration !== 'device' && orchestration !== 'host') {
      fail(`${path}.orchestration`, 'expected "device" or "host"');
    }
    return {
      kind: 'callable',
      backend,
      compileSpecs,
      callable: expectName(method['callable'], `${path}.callable`, fail),
      callableId: callableId as number,
      orchestration: orchestration as 'device' | 'host',
    };
  }
  const inputs = expectArray(method['inputs'], `${path}.inputs`, fail).map((entry, index) => {
    const input = expectObject(entry, `${path}.inputs[${index}]`, fail);
    const features = input['features'];
    if (!Number.isInteger(features) || (features as number) < 1 || (features as number) > 2 ** 24) {
      fail(`${path}.inputs[${index}].features`, 'expected an integer in [1, 2^24]');
    }
    return {
      name: expectName(input['name'], `${path}.inputs[${index}].name`, fail),
      features: features as number,
    };
  });
  if (inputs.length === 0) fail(`${path}.inputs`, 'a graph method needs at least one input');
  const graphJson = expectArray(method['graph'], `${path}.graph`, fail);
  if (graphJson.length > MAX_GRAPH_NODES)
    fail(`${path}.graph`, `more than ${MAX_GRAPH_NODES} nodes`);
  const defined = new Set(inputs.map((input) => input.name));
  const graph = graphJson.map((entry, index) => {
    const node = parseNode(entry, `${path}.graph[${index}]`, fail);
    if (!defined.has(node.input)) {
      fail(
        `${path}.graph[${index}].input`,
        `value "${node.input}" is not defined before this node`,
      );
    }
    if (defined.has(node.output)) {
      fail(`${path}.graph[${index}].output`, `value "${node.output}" is defined twice`);
    }
    defined.add(node.output);
    return node;
  });
  const outputs = expectArray(method['outputs'], `${path}.outputs`, fail).map((entry, index) => {
    const output = expectName(entry, `${path}.outputs[${index}]`, fail);
    if (!defined.has(output))
      fail(`${path}.outputs[${index}]`, `value "${output}" is never computed`);
    return output;
  });
  if (outputs.length === 0) fail(`${path}.outputs`, 'a graph method needs at least one output');
  return { kind: 'graph', backend, compileSpecs, inputs, outputs, graph };
}

function parseNode(raw: unknown, path: string, fail: Fail): GraphNode {
  const node = expectObject(raw, path, fail);
  const op = node['op'];
  if (typeof op !== 'string' || !GRAPH_OPS.has(op)) {
    return fail(
      `${path}.op`,
      `expected one of ${[...GRAPH_OPS].join(', ')} but received ${JSON.stringify(op)}`,
    );
  }
  const input = expectName(node['input'], `${path}.input`, fail);
  const output = expectName(node['output'], `${path}.output`, fail);
  if (op !== 'linear') return { op: op as 'relu' | 'gelu', input, output };
  const weight = expectName(node['weight'], `${path}.weight`, fail);
  const linear: GraphNode = { op: 'linear', input, output, weight };
  if (node['bias'] !== undefined) linear.bias = expectName(node['bias'], `${path}.bias`, fail);
  const outputMin = optionalNumber(node['output_min'], `${path}.output_min`, fail);
  const outputMax = optionalNumber(node['output_max'], `${path}.output_max`, fail);
  // XNNPACK refuses a lower bound above the upper one (xnn_status_invalid_parameter).
  if (outputMin !== undefined && outputMax !== undefined && outputMin > outputMax) {
    fail(
      `${path}.output_min`,
      `expected at most output_max (${outputMax}) but received ${outputMin}`,
    );
  }
  if (outputMin !== undefined) linear.outputMin = outputMin;
  if (outputMax !== undefined) linear.outputMax = outputMax;
  return linear;
}

function optionalNumber(value: unknown, path: string, fail: Fail): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || Number.isNaN(value)) return fail(path, 'expected a number');
  return value;
}

function parseCompileSpecs(
  raw: unknown,
  path: string,
  fail: Fail,
): Record<string, CompileSpecValue> {
  const specs = expectObject(raw, path, fail);
  const out: Record<string, CompileSpecValue> = {};
  for (const [key, value] of Object.entries(specs)) {
    if (typeof value !== 'boolean' && typeof value !== 'number' && typeof value !== 'string') {
      fail(`${path}.${key}`, 'expected a boolean, number or string');
    }
    out[key] = value as CompileSpecValue;
  }
  return out;
}

function expectObject(value: unknown, path: string, fail: Fail): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail(path, 'expected an object');
  }
  return value as Record<string, unknown>;
}

function expectArray(value: unknown, path: string, fail: Fail): unknown[] {
  if (!Array.isArray(value)) return fail(path, 'expected an array');
  return value;
}

function expectName(value: unknown, path: string, fail: Fail): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_NAME_LENGTH) {
    return fail(path, `expected a string of 1..${MAX_NAME_LENGTH} characters`);
  }
  return value;
}

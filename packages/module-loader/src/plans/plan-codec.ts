import { createHash } from 'node:crypto';
import type { FileIdentity } from '../safetensors/identity.js';
import { decodeBigInt, decodeIdentity, encodeIdentity } from '../safetensors/record-codec.js';

export const METHOD_PLANS_FORMAT = 'memlayer-method-plans';
export const METHOD_PLANS_VERSION = 1;
/** Plans one file keeps (per program path and method); the least recently saved go first. */
export const MAX_METHOD_PLANS = 64;
/** Linear nodes a plan may describe (a manifest holds far fewer: it is capped at 16 MiB). */
const MAX_PLANNED_NODES = 1 << 22;

/** A weight file a plan was made from, as it was then. */
export interface PlannedWeightFile {
  readonly identity: FileIdentity;
  /** When its table and digests were read (see trustworthy: a racy file is not trusted). */
  readonly readAtNs: bigint;
}

/**
 * What a method's XNNPACK init learnt from a program and its weights, so that the next start
 * of the same files can skip reading the weights' tables and checking the nodes: the cache
 * key of every linear node's kernel and bias and the node's features. Valid only for the
 * manifest bytes (by digest) and the weight files (by identity) it names.
 */
export interface MethodPlan {
  /** Absolute path of the manifest. */
  readonly program: string;
  readonly method: string;
  /** Hex SHA-256 of the manifest's bytes. */
  readonly manifestDigest: string;
  /** The program's weight files, in the manifest's order. */
  readonly weights: readonly PlannedWeightFile[];
  /** Nodes of the method's graph (linear or not). */
  readonly nodes: number;
  /** Per linear node, in graph order: output and input features. */
  readonly outFeatures: readonly number[];
  readonly inFeatures: readonly number[];
  /** Per linear node: '1' when it has a bias. */
  readonly hasBias: string;
  /** Per linear node: its kernel's key, then its bias's key when it has one. */
  readonly keys: readonly string[];
}

export interface EncodedPlan {
  program: string;
  method: string;
  manifest: string;
  weights: Record<string, unknown>[];
  nodes: number;
  /** out, in per linear node. */
  features: number[];
  bias: string;
  /** The keys joined by ','. */
  keys: string;
  /** Hex SHA-256 of every field above (see checkOf): a plan that rotted is not used. */
  check: string;
}

/** A plan as the file stores it (features interleaved, keys joined, bigints as strings). */
export function encodePlan(plan: MethodPlan): EncodedPlan {
  const features: number[] = [];
  for (let i = 0; i < plan.outFeatures.length; i++) {
    features.push(plan.outFeatures[i] as number, plan.inFeatures[i] as number);
  }
  const encoded = {
    program: plan.program,
    method: plan.method,
    manifest: plan.manifestDigest,
    weights: plan.weights.map(({ identity, readAtNs }) => ({
      ...encodeIdentity(identity),
      readAtNs: String(readAtNs),
    })),
    nodes: plan.nodes,
    features,
    bias: plan.hasBias,
    keys: plan.keys.join(','),
  };
  return { ...encoded, check: checkOf(encoded) };
}

/**
 * The digest of an encoded plan's fields. A key or feature that rotted on disk could name
 * another entry of the cache (same bytes packed for another shape): the plan is dropped
 * before any key is used. Hashing ~2 MB of keys costs ~2 ms at 16384 layers.
 */
function checkOf(plan: Omit<EncodedPlan, 'check'>): string {
  const hash = createHash('sha256');
  for (const field of [
    plan.program,
    plan.method,
    plan.manifest,
    JSON.stringify(plan.weights),
    String(plan.nodes),
    plan.features.join(','),
    plan.bias,
    plan.keys,
  ]) {
    hash.update(field, 'utf8').update('\n');
  }
  return hash.digest('hex');
}

/** A plans file of encoded plans (from encodePlan, or as decodePlans read them). */
export function encodePlanFile(plans: readonly unknown[]): string {
  return JSON.stringify({ format: METHOD_PLANS_FORMAT, version: METHOD_PLANS_VERSION, plans });
}

/**
 * The plans of a file's text, each still encoded (a plan is decoded only when its program
 * and method are asked for). Throws a plain Error when the text is not a plans file.
 */
export function decodePlans(text: string): unknown[] {
  const json = JSON.parse(text) as Record<string, unknown>;
  if (json?.['format'] !== METHOD_PLANS_FORMAT || json['version'] !== METHOD_PLANS_VERSION) {
    throw new Error(`not a ${METHOD_PLANS_FORMAT} v${METHOD_PLANS_VERSION} file`);
  }
  const plans = json['plans'];
  if (!Array.isArray(plans) || plans.length > MAX_METHOD_PLANS) throw new Error('bad plans');
  return plans;
}

/** Program path and method of an encoded plan, or undefined when it has none. */
export function planAddress(raw: unknown): { program: string; method: string } | undefined {
  const { program, method } = (raw ?? {}) as Partial<EncodedPlan>;
  if (typeof program !== 'string' || typeof method !== 'string') return undefined;
  return { program, method };
}

const HEX_DIGEST = /^[0-9a-f]{64}$/;
const BIAS_FLAGS = /^[01]*$/;

/**
 * An encoded plan, checked for shape: every count agrees with every other and every
 * feature is a positive integer. Keys are not checked one by one: a wrong key misses the
 * cache (entries are checked by name, layout and size) and a miss verifies the key against
 * the tensor's content before packing. Throws a plain Error when malformed.
 */
export function decodePlan(raw: unknown): MethodPlan {
  const { program, method, manifest, weights, nodes, features, bias, keys, check } = (raw ??
    {}) as Partial<EncodedPlan>;
  if (typeof program !== 'string' || typeof method !== 'string') throw new Error('bad address');
  if (typeof manifest !== 'string' || !HEX_DIGEST.test(manifest)) throw new Error('bad manifest');
  if (!Array.isArray(weights)) throw new Error('bad weights');
  if (!Number.isSafeInteger(nodes) || (nodes as number) < 0) throw new Error('bad nodes');
  if (typeof bias !== 'string' || bias.length > MAX_PLANNED_NODES || !BIAS_FLAGS.test(bias)) {
    throw new Error('bad bias flags');
  }
  const linear = bias.length;
  if (!Array.isArray(features) || features.length !== 2 * linear || linear > (nodes as number)) {
    throw new Error('bad features');
  }
  const outFeatures = new Array<number>(linear);
  const inFeatures = new Array<number>(linear);
  let biases = 0;
  for (let i = 0; i < linear; i++) {
    const out = features[2 * i];
    const inputs = features[2 * i + 1];
    if (!isFeatureCount(out) || !isFeatureCount(inputs)) throw new Error('bad features');
    outFeatures[i] = out;
    inFeatures[i] = inputs;
    if (bias.charCodeAt(i) === 49) biases++;
  }
  if (typeof keys !== 'string') throw new Error('bad keys');
  const encoded = {
    program,
    method,
    manifest,
    weights,
    nodes: nodes as number,
    features,
    bias,
    keys,
  };
  if (check !== checkOf(encoded)) throw new Error('check digest differs: the plan changed on disk');
  const split = linear === 0 ? [] : keys.split(',');
  if (split.length !== linear + biases) throw new Error('bad keys');
  return {
    program,
    method,
    manifestDigest: manifest,
    weights: weights.map((file) => ({
      identity: decodeIdentity(file),
      readAtNs: decodeBigInt(file?.['readAtNs'], 'bad readAtNs'),
    })),
    nodes: nodes as number,
    outFeatures,
    inFeatures,
    hasBias: bias,
    keys: split,
  };
}

function isFeatureCount(value: unknown): value is number {
  return typeof value === 'number' && (value | 0) === value && value > 0;
}

import { crc32cOf } from '@memlayer/cache-format';
import type { FileIdentity } from '../safetensors/identity.js';
import { decodeReadIdentity, encodeReadIdentity } from '../safetensors/record-codec.js';

export const METHOD_PLANS_FORMAT = 'memlayer-method-plans';
/**
 * 5: each plan's entry names on a line of their own after the JSON (read without a JSON
 * decode). 4: one key per linear node, the name of its cache entry (kernel key +
 * bias key) inside the JSON. 3: a key per tensor; the file's bytes checked as a whole by
 * CRC32C (2: by SHA-256, 1: a check per plan over its parsed fields).
 */
export const METHOD_PLANS_VERSION = 5;
/** Plans one file keeps (per program path and method); the least recently saved go first. */
export const MAX_METHOD_PLANS = 64;
/** Linear nodes a plan may describe (a manifest holds far fewer: it is capped at 16 MiB). */
const MAX_PLANNED_NODES = 1 << 22;

/** A file a plan was made from (the manifest or a weight file), as it was then. */
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
  /**
   * The manifest file as it was read: while it keeps this identity (and had settled then),
   * its bytes are the plan's without being hashed again.
   */
  readonly manifestFile: PlannedWeightFile;
  /** The program's weight files, in the manifest's order. */
  readonly weights: readonly PlannedWeightFile[];
  /** Nodes of the method's graph (linear or not). */
  readonly nodes: number;
  /**
   * Per linear node, in graph order: its output then its input features (as stored: each
   * is checked to be a positive integer where it is used, see keysFromPlan).
   */
  readonly features: readonly unknown[];
  /** Per linear node: '1' when it has a bias. */
  readonly hasBias: string;
  /**
   * Per linear node: the name of its cache entry, its kernel's key followed by its bias's
   * key when it has one (each key starts with 64 hex digits: the two split back).
   */
  readonly entryNames: readonly string[];
}

export interface EncodedPlan {
  program: string;
  method: string;
  manifest: string;
  manifestFile: Record<string, unknown>;
  weights: Record<string, unknown>[];
  nodes: number;
  /** out, in per linear node. */
  features: number[];
  bias: string;
  /**
   * The entry names joined by ',': a string in a plan to write, the bytes of its line in a
   * plan read from a file (kept as bytes until that plan is decoded). Not part of the JSON.
   */
  keys: string | Uint8Array;
}

/** A plan as the file stores it (features interleaved, keys joined, bigints as strings). */
export function encodePlan(plan: MethodPlan): EncodedPlan {
  return {
    program: plan.program,
    method: plan.method,
    manifest: plan.manifestDigest,
    manifestFile: encodeReadIdentity(plan.manifestFile.identity, plan.manifestFile.readAtNs),
    weights: plan.weights.map(({ identity, readAtNs }) => encodeReadIdentity(identity, readAtNs)),
    nodes: plan.nodes,
    features: plan.features as number[],
    bias: plan.hasBias,
    keys: plan.entryNames.join(','),
  };
}

/**
 * A plans file: one line of JSON with the format, version and the CRC32C of the rest (8 hex
 * digits); then one line of JSON with the plans, each without its entry names; then each
 * plan's entry names joined by ',', a line per plan in the plans' order. The names (128 hex
 * digits per node: most of the file) are read as ASCII text and split, with no JSON
 * decode: 2.1 MB of them at 16384 nodes. A key or feature that rotted on disk could
 * name another entry of the cache (same bytes packed for another shape), so the file's
 * bytes are checked before anything in it is parsed or used, with the checksum the cache
 * file's entries use for the same purpose (SHA-256 cost 16 M instructions at 4096 layers,
 * CRC32C well under 1 M).
 */
export function encodePlanFile(plans: readonly unknown[]): Uint8Array {
  const described: Record<string, unknown>[] = [];
  const keyLines: Uint8Array[] = [];
  for (const plan of plans) {
    const { keys, ...rest } = (plan ?? {}) as Record<string, unknown>;
    described.push(rest);
    keyLines.push(keyLineBytes(keys));
  }
  const lines: Uint8Array[] = [Buffer.from(JSON.stringify({ plans: described })), NEWLINE];
  for (const line of keyLines) lines.push(line, NEWLINE);
  const body = Buffer.concat(lines);
  const check = checkOf(body);
  const head = JSON.stringify({
    format: METHOD_PLANS_FORMAT,
    version: METHOD_PLANS_VERSION,
    check,
  });
  return Buffer.concat([Buffer.from(`${head}\n`), body]);
}

const NEWLINE = Uint8Array.of(0x0a);

/** A plan's keys as the bytes of its line: entry names are hex digits, so latin1 is exact. */
function keyLineBytes(keys: unknown): Uint8Array {
  if (keys instanceof Uint8Array) return keys;
  if (typeof keys !== 'string' || keys.includes('\n')) throw new Error('bad keys');
  return Buffer.from(keys, 'latin1');
}

/** Longest first line a plans file may have (format, version and check fit well within). */
const MAX_HEAD_BYTES = 256;

/**
 * The plans of a file, each still encoded (a plan is decoded only when its program and
 * method are asked for; its keys stay the bytes of their line). Throws a plain Error when
 * the bytes are not a plans file or differ from their check digest.
 */
export function decodePlans(bytes: Uint8Array): unknown[] {
  const newline = bytes.subarray(0, MAX_HEAD_BYTES).indexOf(0x0a);
  if (newline < 0) throw new Error('no header line');
  const head = JSON.parse(Buffer.from(bytes.subarray(0, newline)).toString('latin1')) as Record<
    string,
    unknown
  >;
  if (head?.['format'] !== METHOD_PLANS_FORMAT)
    throw new Error(`not a ${METHOD_PLANS_FORMAT} file`);
  const version = head['version'];
  // An older version of this package's own file holds nothing usable: the next save replaces it.
  if (typeof version === 'number' && version < METHOD_PLANS_VERSION) return [];
  if (version !== METHOD_PLANS_VERSION) {
    throw new Error(`version ${String(version)} is not ${METHOD_PLANS_VERSION}`);
  }
  const body = bytes.subarray(newline + 1);
  if (checkOf(body) !== head['check']) {
    throw new Error('check digest differs: the file changed on disk');
  }
  let end = body.indexOf(0x0a);
  if (end < 0) throw new Error('no plans line');
  const plans = (
    JSON.parse(new TextDecoder().decode(body.subarray(0, end))) as Record<string, unknown>
  )?.['plans'];
  if (!Array.isArray(plans) || plans.length > MAX_METHOD_PLANS) throw new Error('bad plans');
  for (const plan of plans) {
    if (plan === null || typeof plan !== 'object' || Array.isArray(plan))
      throw new Error('bad plans');
    const start = end + 1;
    end = body.indexOf(0x0a, start);
    if (end < 0) throw new Error('a plan without its keys line');
    (plan as Record<string, unknown>)['keys'] = body.subarray(start, end);
  }
  if (end !== body.length - 1) throw new Error('bytes after the last keys line');
  return plans;
}

/** The check digest of a plans file's body: its CRC32C as 8 hex digits. */
function checkOf(body: Uint8Array): string {
  return crc32cOf(body).toString(16).padStart(8, '0');
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
 * An encoded plan, checked for shape: every count agrees with every other (each feature and
 * entry name is checked where it is used). A wrong key misses the cache (entries are
 * checked by name, layout and size) and a miss verifies the key against the tensor's
 * content before packing. Throws a plain Error when malformed.
 */
export function decodePlan(raw: unknown): MethodPlan {
  const { program, method, manifest, manifestFile, weights, nodes, features, bias, keys } = (raw ??
    {}) as Partial<EncodedPlan>;
  if (typeof program !== 'string' || typeof method !== 'string') throw new Error('bad address');
  if (typeof manifest !== 'string' || !HEX_DIGEST.test(manifest)) throw new Error('bad manifest');
  if (manifestFile === null || typeof manifestFile !== 'object') throw new Error('bad manifest');
  if (!Array.isArray(weights)) throw new Error('bad weights');
  if (!Number.isSafeInteger(nodes) || (nodes as number) < 0) throw new Error('bad nodes');
  if (typeof bias !== 'string' || bias.length > MAX_PLANNED_NODES || !BIAS_FLAGS.test(bias)) {
    throw new Error('bad bias flags');
  }
  const linear = bias.length;
  if (!Array.isArray(features) || features.length !== 2 * linear || linear > (nodes as number)) {
    throw new Error('bad features');
  }
  if (!(keys instanceof Uint8Array)) throw new Error('bad keys');
  const split = linear === 0 ? [] : asciiText(keys).split(',');
  if (split.length !== linear) throw new Error('bad keys');
  return {
    program,
    method,
    manifestDigest: manifest,
    manifestFile: decodeReadIdentity(manifestFile),
    weights: weights.map(decodeReadIdentity),
    nodes: nodes as number,
    features,
    hasBias: bias,
    entryNames: split,
  };
}

/**
 * A keys line as text. Entry names are hex digits and commas (a byte above 0x7f makes a
 * name that fails its check): UTF-8 decoding gives the latin1 text, as a string in V8's
 * heap, which splits 1.7x faster than Node's latin1 decode of a line over 1 MB (an external
 * string): 1.0 against 1.7 ms for 16384 names.
 */
function asciiText(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

/** A feature count a plan may give: a positive 32-bit integer. */
export function isFeatureCount(value: unknown): value is number {
  return typeof value === 'number' && (value | 0) === value && value > 0;
}

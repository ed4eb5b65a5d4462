import { type ArgDirection, CORE_MAX_TENSOR_ARGS } from './constants.js';
import { DeviceRunnerError, invalidArgument } from './errors.js';
import { CoreCallableLayout } from './layout.js';

/** One AICore kernel: its argument signature and its binary. */
export interface CoreCallableSpec {
  readonly signature?: readonly ArgDirection[];
  readonly binary: Uint8Array;
}

export interface CoreCallableView {
  readonly signature: ArgDirection[];
  readonly binarySize: number;
  readonly resolvedAddr: bigint;
  /** Image length: binary offset (192) + binary_size. */
  readonly imageSize: number;
}

export function coreCallableImageSize(binarySize: number): number {
  return CoreCallableLayout.binaryOffset + binarySize;
}

export function checkSignature(
  signature: readonly number[],
  max: number,
  what: string,
): asserts signature is readonly ArgDirection[] {
  if (!Array.isArray(signature)) invalidArgument('an array of ArgDirection', what, signature);
  if (signature.length > max) {
    throw new DeviceRunnerError(
      'ERR_SIG_COUNT_OUT_OF_RANGE',
      `Expected at most ${max} arguments for ${what} but received ${signature.length}`,
    );
  }
  for (const direction of signature) {
    if (!isArgDirection(direction)) {
      invalidArgument('an ArgDirection (0..3)', `an entry of ${what}`, direction);
    }
  }
}

export function isArgDirection(value: unknown): value is ArgDirection {
  return value === 0 || value === 1 || value === 2 || value === 3;
}

/** Writes a CoreCallable image into `target` at `offset` (which must be zero-filled). */
export function writeCoreCallable(target: DataView, offset: number, spec: CoreCallableSpec): void {
  const signature = spec.signature ?? [];
  for (let i = 0; i < signature.length; i++) {
    target.setInt32(offset + CoreCallableLayout.signature + 4 * i, signature[i] as number, true);
  }
  target.setInt32(offset + CoreCallableLayout.sigCount, signature.length, true);
  target.setUint32(offset + CoreCallableLayout.binarySize, spec.binary.length, true);
  target.setBigUint64(offset + CoreCallableLayout.resolvedAddr, 0n, true);
  new Uint8Array(target.buffer, target.byteOffset, target.byteLength).set(
    spec.binary,
    offset + CoreCallableLayout.binaryOffset,
  );
}

export function validateCoreCallableSpec(spec: CoreCallableSpec, what: string): void {
  if (spec === null || typeof spec !== 'object') invalidArgument('an object', what, spec);
  if (!(spec.binary instanceof Uint8Array)) {
    invalidArgument('a Uint8Array', `${what}.binary`, spec.binary);
  }
  checkSignature(spec.signature ?? [], CORE_MAX_TENSOR_ARGS, `${what}.signature`);
}

/** Builds a standalone CoreCallable image (192 + binary_size bytes, resolved_addr 0). */
export function buildCoreCallable(spec: CoreCallableSpec): Uint8Array {
  validateCoreCallableSpec(spec, 'core callable');
  const image = new Uint8Array(coreCallableImageSize(spec.binary.length));
  writeCoreCallable(new DataView(image.buffer), 0, spec);
  return image;
}

/**
 * Reads the CoreCallable header at `offset` of `bytes`, checking that its image fits
 * before `limit` (exclusive). Throws DeviceRunnerError on any inconsistency.
 */
export function readCoreCallable(
  bytes: Uint8Array,
  offset = 0,
  limit: number = bytes.length,
): CoreCallableView {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (offset + CoreCallableLayout.binaryOffset > limit) {
    throw new DeviceRunnerError(
      'ERR_CHILD_OUT_OF_RANGE',
      `CoreCallable at ${offset} needs ${CoreCallableLayout.binaryOffset} header bytes but only ${Math.max(0, limit - offset)} remain`,
    );
  }
  const sigCount = view.getInt32(offset + CoreCallableLayout.sigCount, true);
  if (sigCount < 0 || sigCount > CORE_MAX_TENSOR_ARGS) {
    throw new DeviceRunnerError(
      'ERR_SIG_COUNT_OUT_OF_RANGE',
      `CoreCallable at ${offset} has sig_count ${sigCount}, outside [0, ${CORE_MAX_TENSOR_ARGS}]`,
    );
  }
  const signature: ArgDirection[] = [];
  for (let i = 0; i < sigCount; i++) {
    const direction = view.getInt32(offset + 4 * i, true);
    if (!isArgDirection(direction)) {
      throw new DeviceRunnerError(
        'ERR_BAD_SIGNATURE',
        `CoreCallable at ${offset} has argument ${i} with direction ${direction}`,
      );
    }
    signature.push(direction);
  }
  const binarySize = view.getUint32(offset + CoreCallableLayout.binarySize, true);
  const imageSize = coreCallableImageSize(binarySize);
  if (offset + imageSize > limit) {
    throw new DeviceRunnerError(
      'ERR_CHILD_OUT_OF_RANGE',
      `CoreCallable at ${offset} declares a ${binarySize}-byte binary that runs past ${limit}`,
    );
  }
  return {
    signature,
    binarySize,
    resolvedAddr: view.getBigUint64(offset + CoreCallableLayout.resolvedAddr, true),
    imageSize,
  };
}

import { Buffer } from 'node:buffer';
import { invalidArgument } from '../errors.js';
import type { LookUpKey, PackedShapeKey } from './provider.js';

const U32_MAX = 0xffff_ffff;

export function validateKey(key: LookUpKey): void {
  validateShapeKey(key);
  if (key.kernel === null || typeof key.kernel !== 'object') {
    invalidArgument('an object', 'key.kernel', key.kernel);
  }
  if (key.bias !== null && typeof key.bias !== 'object') {
    invalidArgument('an object or null', 'key.bias', key.bias);
  }
}

/** The fields of a key every layer of one shape shares (seed, fingerprint, layout, size). */
export function validateShapeKey(key: PackedShapeKey): void {
  if (key === null || typeof key !== 'object') invalidArgument('a LookUpKey', 'key', key);
  if (!isU32(key.seed)) invalidArgument('a u32', 'key.seed', key.seed);
  if (!isU32(key.fingerprint)) invalidArgument('a u32', 'key.fingerprint', key.fingerprint);
  const { layout, packedSize } = key;
  if (layout !== undefined && (layout === null || typeof layout !== 'object')) {
    invalidArgument('a PackingLayout or undefined', 'key.layout', layout);
  }
  if (
    packedSize !== undefined &&
    (typeof packedSize !== 'number' || !Number.isSafeInteger(packedSize) || packedSize < 0)
  ) {
    invalidArgument('a non-negative integer or undefined', 'key.packedSize', packedSize);
  }
}

export function isU32(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= U32_MAX;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array, size: number): boolean {
  return Buffer.from(a.buffer, a.byteOffset, size).equals(
    Buffer.from(b.buffer, b.byteOffset, size),
  );
}

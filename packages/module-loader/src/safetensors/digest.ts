import { hash } from 'node:crypto';
import type { SafetensorsDtype } from './dtypes.js';

/** Lower-case hex SHA-256 of a tensor's stored bytes (ExecuTorch's node_visitor.py names constants so). */
export function sha256Hex(bytes: Uint8Array): string {
  return hash('sha256', bytes, 'hex');
}

/**
 * The name under which the XNNPACK backend hands a tensor to the weights cache: its digest,
 * plus the stored dtype when it is widened on load (the same bytes read as F16 and as BF16
 * are different weights). Every key starts with 64 hex digits, so kernel key + bias key
 * (the cache's entry name) splits back unambiguously.
 */
export function contentKey(digest: string, dtype: SafetensorsDtype): string {
  return dtype === 'F32' ? digest : `${digest}.${dtype.toLowerCase()}`;
}

/** Hex digits of the digest every content key starts with. */
const DIGEST_HEX_DIGITS = 64;
const DOT = 0x2e;

/**
 * Where the kernel's key ends in an entry name (kernel key + bias key, or the kernel key
 * alone): after the digest and its dtype suffix (".f16", ".bf16"), if any. -1 when the name
 * does not start with a content key's shape.
 */
export function kernelKeyEnd(entryName: string): number {
  if (entryName.length < DIGEST_HEX_DIGITS) return -1;
  if (entryName.charCodeAt(DIGEST_HEX_DIGITS) !== DOT) return DIGEST_HEX_DIGITS;
  if (entryName.startsWith('.f16', DIGEST_HEX_DIGITS)) return DIGEST_HEX_DIGITS + 4;
  if (entryName.startsWith('.bf16', DIGEST_HEX_DIGITS)) return DIGEST_HEX_DIGITS + 5;
  return -1;
}

/** Whether an entry name holds a kernel key and, as `hasBias` says, a bias key after it. */
export function isEntryName(entryName: string, hasBias: boolean): boolean {
  const end = kernelKeyEnd(entryName);
  if (end < 0) return false;
  return hasBias ? entryName.length - end >= DIGEST_HEX_DIGITS : entryName.length === end;
}

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

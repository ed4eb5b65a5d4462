import type { SafetensorsDtype } from './dtypes.js';

/** node:crypto, loaded by the first digest rather than by importing this package (~2 ms). */
export function nodeCrypto(): typeof import('node:crypto') {
  return process.getBuiltinModule('node:crypto');
}

/**
 * The name under which the XNNPACK backend hands a tensor to the weights cache: its digest
 * (lower-case hex SHA-256 of the stored bytes, as ExecuTorch's node_visitor.py names
 * constants), plus the stored dtype when it is widened on load (the same bytes read as F16 and as BF16
 * are different weights).
 */
export function contentKey(digest: string, dtype: SafetensorsDtype): string {
  return dtype === 'F32' ? digest : `${digest}.${dtype.toLowerCase()}`;
}

/** Lower-case hex SHA-256: the key ExecuTorch gives a constant (operators/node_visitor.py). */
export function sha256Hex(bytes: Uint8Array): string {
  return nodeCrypto().createHash('sha256').update(bytes).digest('hex');
}

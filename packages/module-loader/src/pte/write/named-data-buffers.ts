import { ModuleLoaderError } from '../../errors.js';
import { sha256Hex } from '../../safetensors/digest.js';
import type { NamedDataEntry } from './pte-description.js';

/** backends/xnnpack/serialization/xnnpack_graph_serialize.py: CONSTANT_TENSOR_ALIGNMENT. */
export const DEFAULT_NAMED_DATA_ALIGNMENT = 16;

export interface NamedDataBuffers {
  /** Unique buffers, each with the alignment of the first key that brought it. */
  buffers: { bytes: Uint8Array; alignment: number }[];
  /** Each distinct key, in first-seen order, with its buffer. */
  keys: { key: string; buffer: number }[];
}

/**
 * Named data deduplicated by content, as exir/_serialize/_named_data_store.py does: keys
 * with the same bytes share one buffer; a key given twice must carry the same bytes.
 */
export function collectNamedData(entries: readonly NamedDataEntry[]): NamedDataBuffers {
  const buffers: NamedDataBuffers['buffers'] = [];
  const keys: NamedDataBuffers['keys'] = [];
  const bufferOfDigest = new Map<string, number>();
  const digestOfKey = new Map<string, string>();
  for (const [index, entry] of entries.entries()) {
    const digest = `${entry.bytes.length}:${sha256Hex(entry.bytes)}`;
    const known = digestOfKey.get(entry.key);
    if (known !== undefined) {
      if (known !== digest) {
        throw new ModuleLoaderError(
          'ERR_INVALID_ARGUMENT',
          `named data key "${entry.key}" is given twice with different bytes`,
          { field: `namedData[${index}].key` },
        );
      }
      continue;
    }
    digestOfKey.set(entry.key, digest);
    let buffer = bufferOfDigest.get(digest);
    if (buffer === undefined) {
      buffer = buffers.length;
      bufferOfDigest.set(digest, buffer);
      buffers.push({
        bytes: entry.bytes,
        alignment: entry.alignment ?? DEFAULT_NAMED_DATA_ALIGNMENT,
      });
    }
    keys.push({ key: entry.key, buffer });
  }
  return { buffers, keys };
}

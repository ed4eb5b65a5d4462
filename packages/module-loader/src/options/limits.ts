// Limits of ExecuTorch's runtime/backend/options.h and backend_options_map.h.
// Upstream stores keys and values in fixed char arrays; we count UTF-8 bytes like it does.

/** kMaxOptionKeyLength is 64 including the terminator: 63 visible bytes. */
export const MAX_OPTION_KEY_BYTES = 63;
/** kMaxOptionValueLength is 256 including the terminator: 255 visible bytes. */
export const MAX_OPTION_STRING_BYTES = 255;
/** LoadBackendOptionsMap holds at most 8 backends. */
export const MAX_BACKENDS = 8;
/** Backend ids are stored like option keys: 63 visible bytes. */
export const MAX_BACKEND_ID_BYTES = 63;
/** Capacity of a BackendOptions builder when none is given (upstream: template parameter). */
export const DEFAULT_OPTIONS_CAPACITY = 16;
/** Integer options are C `int`: signed 32-bit. */
export const INT_OPTION_MIN = -(2 ** 31);
export const INT_OPTION_MAX = 2 ** 31 - 1;

export function utf8ByteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

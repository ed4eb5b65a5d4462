/** safetensors dtype names and their element sizes in bytes. */
export const DTYPE_BYTES = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E5M2: 1,
  F8_E4M3: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  F64: 8,
  I64: 8,
  U64: 8,
} as const;

export type SafetensorsDtype = keyof typeof DTYPE_BYTES;

export function isSafetensorsDtype(value: unknown): value is SafetensorsDtype {
  return typeof value === 'string' && Object.hasOwn(DTYPE_BYTES, value);
}

/** Dtypes that load as f32 tensors (f16/bf16 are widened on load). */
export const FLOAT_DTYPES: ReadonlySet<SafetensorsDtype> = new Set(['F32', 'F16', 'BF16']);

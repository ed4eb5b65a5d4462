// Bounds on what a safetensors header may claim, checked before anything is allocated.

/** The reference implementation refuses headers over 100 MB: a JSON bomb otherwise. */
export const MAX_HEADER_BYTES = 100 * 1024 * 1024;
/** More tensors than this in one file is not a model, it is an attack on the parser. */
export const MAX_TENSORS = 1_000_000;
/** Tensor names are used as cache entry names and map keys. */
export const MAX_TENSOR_NAME_BYTES = 1024;
/** No model tensor has more dimensions; bounds the shape product loop. */
export const MAX_RANK = 16;
/** Offsets and sizes must stay exactly representable as JS numbers. */
export const MAX_SAFE_BYTES = Number.MAX_SAFE_INTEGER;

import type { ModelSpec } from './types.js';

/** Models of ~1000 layers (weight + bias = one cache entry each), sized by f32 weight bytes. */
export function coldWarmModels(quick: boolean): ModelSpec[] {
  return quick
    ? [{ label: '16 MiB', layers: 1024, dim: 64 }]
    : [
        { label: '64 MiB', layers: 1024, dim: 128 },
        { label: '512 MiB', layers: 1024, dim: 362 },
        { label: '1 GiB', layers: 1024, dim: 512 },
      ];
}

/** Model of the memory section (4 processes hold it at once). */
export function memoryModel(quick: boolean): ModelSpec {
  return quick
    ? { label: '16 MiB', layers: 1024, dim: 64 }
    : { label: '512 MiB', layers: 1024, dim: 362 };
}

/** Model of the reload-cycle section. */
export function cyclesModel(quick: boolean): ModelSpec {
  return quick
    ? { label: '4 MiB', layers: 256, dim: 64 }
    : { label: '64 MiB', layers: 1024, dim: 128 };
}

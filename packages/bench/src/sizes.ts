import type { ModelSpec } from './types.js';

/**
 * Models of the start-up sections (weight + bias = one cache entry per layer): many small
 * layers (where per-entry costs show), 1 GiB, and one model over 4 GiB (Node 20's
 * ArrayBuffer limit), sized by f32 weight bytes.
 */
export function coldWarmModels(quick: boolean): ModelSpec[] {
  return quick
    ? [{ label: '16 MiB', layers: 1024, dim: 64 }]
    : [
        { label: '64 MiB', layers: 1024, dim: 128 },
        { label: '1 GiB', layers: 1024, dim: 512 },
        { label: '64 MiB / 4096', layers: 4096, dim: 64 },
        { label: '256 MiB / 16384', layers: 16384, dim: 64 },
        { label: '5 GiB', layers: 20, dim: 8192 },
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

/**
 * Models of the onnxruntime-node comparison and rounds of each (each round starts about a
 * dozen processes; the 1 GiB model's batched forwards take seconds each).
 */
export function versusOrtModels(quick: boolean): { spec: ModelSpec; rounds: number }[] {
  return quick
    ? [{ spec: { label: '130 KiB', layers: 8, dim: 64 }, rounds: 1 }]
    : [
        { spec: { label: '64 MiB', layers: 1024, dim: 128 }, rounds: 7 },
        { spec: { label: '1 GiB', layers: 1024, dim: 512 }, rounds: 3 },
      ];
}

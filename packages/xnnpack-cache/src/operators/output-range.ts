import { WeightsCacheError } from '../errors.js';

/** Clamping bounds as float32, like XNNPACK's float output_min / output_max parameters. */
export interface OutputRange {
  readonly min: number;
  readonly max: number;
}

/**
 * Validates output bounds the way xnn_create_fully_connected_nc_f32 does (NaN bounds and
 * min > max are xnn_status_invalid_parameter; min == max is allowed). Returns null for
 * [-Infinity, +Infinity]: XNNPACK then runs its linear ukernel, which does not clamp.
 */
export function outputRange(
  outputMin: number | undefined,
  outputMax: number | undefined,
): OutputRange | null {
  const min = bound(outputMin, Number.NEGATIVE_INFINITY, 'outputMin');
  const max = bound(outputMax, Number.POSITIVE_INFINITY, 'outputMax');
  if (min > max) {
    throw new WeightsCacheError(
      'ERR_CACHE_INVALID_OUTPUT_RANGE',
      `Expected outputMin <= outputMax but received [${min}, ${max}]`,
    );
  }
  if (min === Number.NEGATIVE_INFINITY && max === Number.POSITIVE_INFINITY) return null;
  return { min, max };
}

function bound(value: number | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new WeightsCacheError(
      'ERR_CACHE_INVALID_OUTPUT_RANGE',
      `Expected a number (not NaN) for ${what} but received ${String(value)}`,
    );
  }
  // XNNPACK takes the bounds as float.
  return Math.fround(value);
}

/**
 * XNNPACK's minmax ukernels: acc = max(acc, min), then min(acc, max), applied after the
 * bias. Their max(NaN, min) yields min (x86 compare-select and ARM fmaxf alike).
 */
export function clampOutputs(y: Float32Array, count: number, range: OutputRange): void {
  const { min, max } = range;
  for (let i = 0; i < count; i++) {
    const v = y[i] as number;
    if (!(v >= min)) y[i] = min;
    else if (v > max) y[i] = max;
  }
}

import { layerWeights, type ModelOptions } from './model.js';
import type { ModelSpec } from './types.js';

/**
 * The model of `spec` (model.ts) run by a plain loop: per layer y = x·Wᵀ + b (then relu
 * with `options.relu`), each sum accumulated in double precision from the bias and rounded
 * to f32 once per layer. The reference outputs are compared against.
 */
export function referenceForward(
  spec: ModelSpec,
  input: Float32Array,
  batch: number,
  options: ModelOptions = {},
): Float32Array {
  const { dim } = spec;
  let x = Float32Array.from(input.subarray(0, batch * dim));
  for (let layer = 0; layer < spec.layers; layer++) {
    const { weight, bias } = layerWeights(spec, layer, options);
    const y = new Float32Array(batch * dim);
    for (let row = 0; row < batch; row++) {
      for (let out = 0; out < dim; out++) {
        let sum = bias[out] as number;
        for (let k = 0; k < dim; k++) {
          sum += (weight[out * dim + k] as number) * (x[row * dim + k] as number);
        }
        y[row * dim + out] = options.relu === true && sum < 0 ? 0 : sum;
      }
    }
    x = y;
  }
  return x;
}

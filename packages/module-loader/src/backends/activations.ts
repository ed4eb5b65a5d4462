/** In-place ReLU. */
export function relu(values: Float32Array): Float32Array {
  for (let i = 0; i < values.length; i++) if ((values[i] as number) < 0) values[i] = 0;
  return values;
}

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

/** In-place GELU, tanh approximation (PyTorch's approximate='tanh'). */
export function gelu(values: Float32Array): Float32Array {
  for (let i = 0; i < values.length; i++) {
    const x = values[i] as number;
    values[i] = 0.5 * x * (1 + Math.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)));
  }
  return values;
}

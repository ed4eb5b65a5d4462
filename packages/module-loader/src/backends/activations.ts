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

/**
 * In-place exact GELU, x·Φ(x) = ½x·erfc(−x/√2): what XNNPACK's gelu computes, so an
 * `XNNGelu` node of a .pte gives ExecuTorch's outputs (to within f32 rounding).
 */
export function geluExact(values: Float32Array): Float32Array {
  for (let i = 0; i < values.length; i++) {
    const x = values[i] as number;
    values[i] = 0.5 * x * erfc(-x * Math.SQRT1_2);
  }
  return values;
}

/** erfc with a relative error under 1.2e-7 (Numerical Recipes' Chebyshev fit, erfcc). */
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t *
                              (-1.13520398 +
                                t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

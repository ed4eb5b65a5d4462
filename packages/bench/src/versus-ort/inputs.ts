import { fillWeights } from '../measure.js';

/** The fixed input every start of a comparison runs: `batch` rows of `dim` features. */
export function fixedInput(dim: number, batch: number): Float32Array {
  return fillWeights(new Float32Array(batch * dim), 7, 2);
}

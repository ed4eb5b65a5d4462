import { referenceForward } from '../mlp-reference.js';
import type { ModelSpec } from '../types.js';
import { VERSUS_MODEL_OPTIONS } from './files.js';
import { fixedInput } from './inputs.js';
import type { OutputAgreement } from './results.js';

function maxAbsDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Number.POSITIVE_INFINITY;
  let max = 0;
  for (let i = 0; i < a.length; i++) {
    max = Math.max(max, Math.abs((a[i] as number) - (b[i] as number)));
  }
  return max;
}

/** The outputs of the fixed batch-1 input: the engines against each other and the reference. */
export function outputAgreement(
  spec: ModelSpec,
  memlayer: { cold: readonly number[]; warm: readonly number[] },
  ortOutputs: readonly (readonly number[])[],
): OutputAgreement {
  const reference = referenceForward(spec, fixedInput(spec.dim, 1), 1, VERSUS_MODEL_OPTIONS);
  return {
    memlayerVsOrt: Math.max(...ortOutputs.map((output) => maxAbsDifference(memlayer.warm, output))),
    memlayerVsReference: maxAbsDifference(memlayer.warm, reference),
    ortVsReference: Math.max(...ortOutputs.map((output) => maxAbsDifference(output, reference))),
    largestOutput: Math.max(0, ...Array.from(reference, Math.abs)),
    memlayerColdEqualsWarm: maxAbsDifference(memlayer.cold, memlayer.warm) === 0,
  };
}

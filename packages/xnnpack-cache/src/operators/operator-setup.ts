import type { PreparedGemmF32 } from '@memlayer/mmap-native';
import { assertNonNegativeInteger, assertPositiveInteger, invalidArgument } from '../errors.js';
import { type FullyConnectedPlan, fullyConnectedPlan } from '../packing/fully-connected-plan.js';
import {
  assertXnnpackRevision,
  DEFAULT_XNNPACK_REVISION,
  XNNPACK_REVISIONS,
  type XnnpackRevision,
} from '../packing/xnnpack-revisions.js';
import type { FullyConnectedSettings } from './fully-connected.js';
import { type OperatorExecution, operatorExecution } from './kernel-choice.js';
import { LAST_SETUP, type LastOperatorSetup } from './last-setup.js';
import { type OutputRange, outputRange } from './output-range.js';
import { assertTiling, DEFAULT_GEMM_TILING, type GemmTiling } from './tiling.js';

/** What every fully-connected operator derives from its options, checked. */
export interface OperatorSetup {
  readonly tiling: GemmTiling;
  readonly plan: FullyConnectedPlan;
  readonly range: OutputRange | null;
  readonly execution: OperatorExecution;
  /**
   * The native GEMM of this layout, range and threads, prepared once (null: the
   * JavaScript kernel runs). Layers of one shape share it: it holds no weights.
   */
  readonly gemm: PreparedGemmF32 | null;
}

/** Checks the options an operator is created with (all but its weights) and plans it. */
export function operatorSetup(options: FullyConnectedSettings): OperatorSetup {
  // Explicit, else what XNNPACK picks on the cache's CPU for this many output channels.
  const tiling =
    options.tiling ?? options.cache.gemmTiling?.(options.outputChannels) ?? DEFAULT_GEMM_TILING;
  // An XNNWeightsCache remembers its last setup; another provider's layers are set up anew.
  const last = (options.cache as { readonly [LAST_SETUP]?: LastOperatorSetup })[LAST_SETUP];
  const remembered = last?.get(options, tiling);
  if (remembered != null) return remembered;
  const setup = checkedSetup(options, tiling);
  // Only a frozen tiling is remembered: another object could change before the next call.
  if (last !== undefined && Object.isFrozen(tiling)) last.set(options, tiling, setup);
  return setup;
}

function checkedSetup(options: FullyConnectedSettings, tiling: GemmTiling): OperatorSetup {
  const { inputChannels, outputChannels } = options;
  assertPositiveInteger(inputChannels, 'inputChannels');
  assertPositiveInteger(outputChannels, 'outputChannels');
  // A cache's choice is a frozen, valid preset: checked per operator only when one is given.
  if (options.tiling !== undefined) assertTiling(tiling);
  const extraBytes = options.extraBytes ?? 0;
  if (extraBytes % 4 !== 0) invalidArgument('a multiple of 4', 'extraBytes', extraBytes);
  const range = outputRange(options.outputMin, options.outputMax);
  const plan = fullyConnectedPlan(
    outputChannels,
    inputChannels,
    tiling.nr,
    tiling.kr,
    tiling.sr,
    extraBytes,
    operatorTypeFor(options),
    tiling.padding,
  );
  const execution = operatorExecution(options.kernels, options.threads);
  const gemm =
    execution.native?.prepareGemmF32(plan.gemm, {
      outputMin: range?.min,
      outputMax: range?.max,
      threads: execution.threads,
    }) ?? null;
  return { tiling, plan, range, execution, gemm };
}

function operatorTypeFor(options: FullyConnectedSettings): number {
  if (options.operatorType !== undefined) {
    assertNonNegativeInteger(options.operatorType, 'operatorType');
    return options.operatorType;
  }
  const revision: XnnpackRevision =
    options.xnnpackRevision === undefined
      ? (options.cache.xnnpackRevision ?? DEFAULT_XNNPACK_REVISION)
      : assertXnnpackRevision(options.xnnpackRevision, 'xnnpackRevision');
  return XNNPACK_REVISIONS[revision].fullyConnectedNcF32;
}

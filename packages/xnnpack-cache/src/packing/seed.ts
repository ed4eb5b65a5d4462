import { assertNonNegativeInteger } from '../errors.js';

/**
 * xnn_operator_type_fully_connected_nc_f32 in XNNPACK's operator-type enum (value 64 in
 * src/enums/operator-type.yaml at the time of writing; it moves between versions).
 */
export const OPERATOR_TYPE_FULLY_CONNECTED_NC_F32 = 64;

export interface FullyConnectedSeedInput {
  readonly outputChannels: number;
  readonly inputChannels: number;
  readonly nr: number;
  readonly kr: number;
  readonly sr: number;
  readonly extraBytes?: number;
  readonly operatorType?: number;
  /** Weights given as [input][output] (XNN_FLAG_TRANSPOSE_WEIGHTS). */
  readonly transposed?: boolean;
}

/**
 * The cache seed XNNPACK computes for a fully-connected operator: output channels ^
 * input channels ^ nr ^ kr ^ sr ^ extra bytes ^ operator type, inverted when the weights
 * are transposed; as a u32.
 */
export function fullyConnectedSeed(input: FullyConnectedSeedInput): number {
  const extraBytes = input.extraBytes ?? 0;
  const operatorType = input.operatorType ?? OPERATOR_TYPE_FULLY_CONNECTED_NC_F32;
  for (const [what, value] of [
    ['outputChannels', input.outputChannels],
    ['inputChannels', input.inputChannels],
    ['nr', input.nr],
    ['kr', input.kr],
    ['sr', input.sr],
    ['extraBytes', extraBytes],
    ['operatorType', operatorType],
  ] as const) {
    assertNonNegativeInteger(value, what);
  }
  const seed =
    input.outputChannels ^
    input.inputChannels ^
    input.nr ^
    input.kr ^
    input.sr ^
    extraBytes ^
    operatorType;
  return (input.transposed === true ? ~seed : seed) >>> 0;
}

import { invalidArgument } from '../errors.js';
import { DEFAULT_XNNPACK_REVISION, XNNPACK_REVISIONS } from './xnnpack-revisions.js';

/**
 * xnn_operator_type_fully_connected_nc_f32 at the default XNNPACK revision (63 at
 * 92a7ad50, what ExecuTorch main pins; see XNNPACK_REVISIONS for others).
 */
export const OPERATOR_TYPE_FULLY_CONNECTED_NC_F32 =
  XNNPACK_REVISIONS[DEFAULT_XNNPACK_REVISION].fullyConnectedNcF32;

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
  return fullyConnectedSeedOf(
    input.outputChannels,
    input.inputChannels,
    input.nr,
    input.kr,
    input.sr,
    input.extraBytes ?? 0,
    input.operatorType ?? OPERATOR_TYPE_FULLY_CONNECTED_NC_F32,
    input.transposed === true,
  );
}

/** fullyConnectedSeed with positional arguments: no object or array per call. */
export function fullyConnectedSeedOf(
  outputChannels: number,
  inputChannels: number,
  nr: number,
  kr: number,
  sr: number,
  extraBytes: number,
  operatorType: number,
  transposed: boolean,
): number {
  checkField(outputChannels, 'outputChannels');
  checkField(inputChannels, 'inputChannels');
  checkField(nr, 'nr');
  checkField(kr, 'kr');
  checkField(sr, 'sr');
  checkField(extraBytes, 'extraBytes');
  checkField(operatorType, 'operatorType');
  const seed = outputChannels ^ inputChannels ^ nr ^ kr ^ sr ^ extraBytes ^ operatorType;
  return (transposed ? ~seed : seed) >>> 0;
}

function checkField(value: number, what: string): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    invalidArgument('a non-negative integer', what, value);
  }
}

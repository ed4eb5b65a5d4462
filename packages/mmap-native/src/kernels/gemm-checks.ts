// The checks of gemmF32's and PreparedGemmF32's arguments, worded for users (the addon
// repeats them: src/native/kernels/gemm-args.cc). A layout and settings are checked once
// per prepared GEMM; the buffers and the batch at every call.
import {
  expectFloat32Array,
  expectInteger,
  expectNumber,
  expectObject,
  expectOneOf,
  fail,
} from '../validate.js';
import { BEST_GEMM_ISA_CODE, GEMM_ISA_CODES, type GemmIsa } from './gemm-isa.js';

export const MAX_DIMENSION = 2 ** 31 - 1;
const MAX_TILE = 4096;
const MAX_THREADS = 256;

/** A layout with every field checked and extraBytes filled in, and its packed size. */
export interface CheckedLayout {
  readonly nc: number;
  readonly kc: number;
  readonly nr: number;
  readonly kr: number;
  readonly sr: number;
  readonly extraBytes: number;
  /** Bytes the packed blocks take: `packed` must hold at least this many. */
  readonly packedBytes: number;
}

/** Options as the addon takes them: bounds as float32, the instruction set by code. */
export interface CheckedSettings {
  readonly outputMin: number;
  readonly outputMax: number;
  readonly threads: number;
  readonly isa: number;
}

export function checkLayout(layout: unknown): CheckedLayout {
  if (layout === undefined) fail('ERR_INVALID_ARG_TYPE', 'an object', 'layout', layout);
  const fields = expectObject(layout, 'layout');
  const nc = expectInteger(fields['nc'], 'layout.nc', 1, MAX_DIMENSION);
  const kc = expectInteger(fields['kc'], 'layout.kc', 1, MAX_DIMENSION);
  const nr = expectInteger(fields['nr'], 'layout.nr', 1, MAX_TILE);
  const kr = expectInteger(fields['kr'], 'layout.kr', 1, MAX_TILE);
  const sr = expectInteger(fields['sr'], 'layout.sr', 1, MAX_TILE);
  const extraBytes =
    fields['extraBytes'] === undefined
      ? 0
      : expectInteger(fields['extraBytes'], 'layout.extraBytes', 0, MAX_DIMENSION);
  const skr = sr * kr;
  if ((skr & (skr - 1)) !== 0) {
    fail('ERR_INVALID_ARG_VALUE', 'sr·kr to be a power of two', 'layout.sr·kr', skr);
  }
  if (extraBytes % 4 !== 0) {
    fail('ERR_INVALID_ARG_VALUE', 'a multiple of 4', 'layout.extraBytes', extraBytes);
  }
  const blocks = Math.ceil(nc / nr);
  const paddedKc = Math.ceil(kc / skr) * skr;
  const packedBytes = blocks * (nr * (1 + paddedKc) * 4 + extraBytes);
  return { nc, kc, nr, kr, sr, extraBytes, packedBytes };
}

/** outputMin, outputMax, threads and isa of `options` (named `name`). */
export function checkSettings(
  options: unknown,
  name: 'options' | 'settings',
  isas: readonly GemmIsa[],
): CheckedSettings {
  const settings = expectObject(options, name);
  const outputMin = bound(settings['outputMin'], name, 'outputMin', Number.NEGATIVE_INFINITY);
  const outputMax = bound(settings['outputMax'], name, 'outputMax', Number.POSITIVE_INFINITY);
  if (outputMin > outputMax) {
    fail(
      'ERR_OUT_OF_RANGE',
      `a number >= outputMin (${outputMin})`,
      `${name}.outputMax`,
      outputMax,
    );
  }
  const threads = settings['threads'] === undefined ? 1 : settings['threads'];
  if (!Number.isInteger(threads) || (threads as number) < 1 || (threads as number) > MAX_THREADS) {
    expectInteger(threads, `${name}.threads`, 1, MAX_THREADS);
  }
  const isa =
    settings['isa'] === undefined
      ? BEST_GEMM_ISA_CODE
      : GEMM_ISA_CODES.indexOf(expectOneOf(settings['isa'], `${name}.isa`, isas));
  return { outputMin, outputMax, threads: threads as number, isa };
}

/** A bound as float32, or `fallback` when it is not given. */
function bound(value: unknown, name: string, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  // Its name is only spelled out for the error (gemmF32 checks its options at every call).
  if (typeof value !== 'number' || Number.isNaN(value)) expectNumber(value, `${name}.${field}`);
  return Math.fround(value as number);
}

/** Checks `packed` (a Uint8Array at a multiple of 4 bytes, or an ArrayBuffer) and its size. */
export function checkPacked(packed: unknown, packedBytes: number, name = 'packed'): void {
  let bytes = 0;
  if (packed instanceof Uint8Array) {
    if (packed.byteOffset % 4 !== 0) {
      fail('ERR_INVALID_ARG_VALUE', 'a view that starts at a multiple of 4 bytes', name, packed);
    }
    bytes = packed.byteLength;
  } else if (packed instanceof ArrayBuffer) {
    bytes = packed.byteLength;
  } else {
    fail('ERR_INVALID_ARG_TYPE', 'a Uint8Array or an ArrayBuffer', name, packed);
  }
  if (bytes < packedBytes) {
    fail('ERR_OUT_OF_RANGE', `at least ${packedBytes} bytes of packed weights`, name, packed);
  }
}

/** Checks batch (1 .. 2^31-1) and that input holds batch·kc floats. */
export function checkInput(input: unknown, batch: unknown, kc: number): void {
  // Written out rather than through expectInteger: this runs once per layer per forward.
  if (typeof batch !== 'number' || !Number.isInteger(batch) || batch < 1 || batch > MAX_DIMENSION) {
    expectInteger(batch, 'batch', 1, MAX_DIMENSION);
  }
  if (!(input instanceof Float32Array)) expectFloat32Array(input, 'input');
  if ((input as Float32Array).length < (batch as number) * kc) {
    fail(
      'ERR_OUT_OF_RANGE',
      `at least batch·kc = ${(batch as number) * kc} floats`,
      'input',
      input,
    );
  }
}

/** `output` (named `name`) once it is checked to hold batch·nc floats, or a new array. */
export function outputFor(output: unknown, batch: number, nc: number, name: string): Float32Array {
  if (output === undefined) return new Float32Array(batch * nc);
  if (!(output instanceof Float32Array)) expectFloat32Array(output, name);
  if ((output as Float32Array).length < batch * nc) {
    fail('ERR_OUT_OF_RANGE', `at least batch·nc = ${batch * nc} floats`, name, output);
  }
  return output as Float32Array;
}

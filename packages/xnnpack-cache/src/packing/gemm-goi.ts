import { assertNonNegativeInteger, assertPositiveInteger, invalidArgument } from '../errors.js';
import { recordPacking } from './packing-stats.js';

/**
 * What the rows past nc in a group's last block hold. XNNPACK's reference packer leaves
 * them zero; its x32-packw ukernels point each missing row at the last real one:
 * - 'zeros': xnn_pack_f32_gemm_goi_w.
 * - 'copy-last': every padding row copies the last real row (the sse2 ukernels).
 * - 'copy-last-u4': the same, but the block's final row stays zero over the first
 *   4·⌊kc/4⌋ columns, which the 4-column main loop never loads (avx and avx512f ukernels).
 * Nothing reads padding rows: this only makes the bytes equal to XNNPACK's.
 */
export type GemmPadding = 'zeros' | 'copy-last' | 'copy-last-u4';

/** Shape and tiling of one f32 GEMM weight packing (XNNPACK's pack_f32_gemm_goi_w). */
export interface GemmGoiShape {
  /** Groups (1 for fully connected). */
  readonly groups?: number;
  /** Output channels per group. */
  readonly nc: number;
  /** Input channels per group. */
  readonly kc: number;
  /** Output-channel tile. */
  readonly nr: number;
  /** Input-channel chunk. */
  readonly kr: number;
  /** Shuffle factor; sr·kr must be a power of two. */
  readonly sr: number;
  /** Bytes skipped after each block of nr channels (ukernel-specific parameters). */
  readonly extraBytes?: number;
  /** What padding rows hold (default 'zeros'). */
  readonly padding?: GemmPadding;
}

export interface GemmGoiLayout {
  readonly groups: number;
  readonly nc: number;
  readonly kc: number;
  readonly nr: number;
  readonly kr: number;
  readonly sr: number;
  readonly extraBytes: number;
  readonly padding: GemmPadding;
  /** kc rounded up to sr·kr (K'). */
  readonly paddedKc: number;
  /** Blocks of nr channels per group. */
  readonly blocksPerGroup: number;
  /** Bytes of one block: nr·(1 + K')·4 + extraBytes. */
  readonly blockBytes: number;
  /** Exact packed size: groups · round_up(nc, nr) / nr · blockBytes. */
  readonly packedBytes: number;
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}

/** Validates a shape and derives its packed layout. */
export function gemmGoiLayout(shape: GemmGoiShape): GemmGoiLayout {
  const groups = shape.groups ?? 1;
  const extraBytes = shape.extraBytes ?? 0;
  assertPositiveInteger(groups, 'groups');
  assertPositiveInteger(shape.nc, 'nc');
  assertNonNegativeInteger(shape.kc, 'kc');
  assertPositiveInteger(shape.nr, 'nr');
  assertPositiveInteger(shape.kr, 'kr');
  assertPositiveInteger(shape.sr, 'sr');
  assertNonNegativeInteger(extraBytes, 'extraBytes');
  const skr = shape.sr * shape.kr;
  if (!isPowerOfTwo(skr)) invalidArgument('sr·kr to be a power of two', 'sr·kr', skr);
  // XNNPACK asserts nr >= sr: each shuffle group spreads rows over sr steps.
  if (shape.nr < shape.sr) invalidArgument(`nr >= sr (${shape.sr})`, 'nr', shape.nr);
  const padding = shape.padding ?? 'zeros';
  if (padding !== 'zeros' && padding !== 'copy-last' && padding !== 'copy-last-u4') {
    invalidArgument("'zeros', 'copy-last' or 'copy-last-u4'", 'padding', padding);
  }
  const paddedKc = Math.ceil(shape.kc / skr) * skr;
  const blocksPerGroup = Math.ceil(shape.nc / shape.nr);
  const blockBytes = shape.nr * (1 + paddedKc) * 4 + extraBytes;
  return {
    groups,
    nc: shape.nc,
    kc: shape.kc,
    nr: shape.nr,
    kr: shape.kr,
    sr: shape.sr,
    extraBytes,
    padding,
    paddedKc,
    blocksPerGroup,
    blockBytes,
    packedBytes: groups * blocksPerGroup * blockBytes,
  };
}

/** Exact packed size in bytes (before rounding up to the allocation alignment). */
export function packedSize(shape: GemmGoiShape): number {
  return gemmGoiLayout(shape).packedBytes;
}

/**
 * XNNPACK's xnn_pack_f32_gemm_goi_w: packs kernel [g][nc][kc] (row-major) and an
 * optional bias [g][nc] into `out`, which must already be zero-filled: padding slots
 * are skipped, not written (as in XNNPACK).
 */
export function packF32GemmGoiW(
  shape: GemmGoiShape,
  kernel: Float32Array,
  bias: Float32Array | null,
  out: Uint8Array,
): void {
  packWithLayout(gemmGoiLayout(shape), kernel, bias, out);
}

/** packF32GemmGoiW for a layout gemmGoiLayout already derived (and validated). */
export function packWithLayout(
  layout: GemmGoiLayout,
  kernel: Float32Array,
  bias: Float32Array | null,
  out: Uint8Array,
): void {
  const { groups, nc, kc, packedBytes } = layout;
  if (!(kernel instanceof Float32Array) || kernel.length < groups * nc * kc) {
    invalidArgument(`a Float32Array of at least ${groups * nc * kc} floats`, 'kernel', kernel);
  }
  if (bias !== null && (!(bias instanceof Float32Array) || bias.length < groups * nc)) {
    invalidArgument(`a Float32Array of at least ${groups * nc} floats or null`, 'bias', bias);
  }
  if (!(out instanceof Uint8Array) || out.byteLength < packedBytes) {
    invalidArgument(`a Uint8Array of at least ${packedBytes} bytes`, 'out', out);
  }

  // Copied as 32-bit integers: the exact bits (as XNNPACK's memcpy-like loops), and an
  // integer load and store cost less than a float32 round trip through a double.
  const kernelBits = new Int32Array(kernel.buffer, kernel.byteOffset, kernel.length);
  const biasBits = bias === null ? null : new Int32Array(bias.buffer, bias.byteOffset, bias.length);
  if (out.byteOffset % 4 === 0 && layout.extraBytes % 4 === 0) {
    // The whole buffer's words, from this layer's word on.
    const floats = new Int32Array(out.buffer, 0, Math.floor(out.buffer.byteLength / 4));
    const base = out.byteOffset / 4;
    for (let g = 0; g < groups; g++) {
      for (let block = 0; block < layout.blocksPerGroup; block++) {
        packBlock(
          layout,
          kernelBits,
          biasBits,
          g,
          block,
          floats,
          base + ((g * layout.blocksPerGroup + block) * layout.blockBytes) / 4,
        );
      }
    }
  } else {
    // Blocks are not float-aligned: pack each into a scratch block, then copy its bytes.
    const blockFloats = Math.ceil(layout.blockBytes / 4);
    const scratch = new Int32Array(blockFloats);
    const scratchBytes = new Uint8Array(scratch.buffer, 0, layout.blockBytes - layout.extraBytes);
    for (let g = 0; g < groups; g++) {
      for (let block = 0; block < layout.blocksPerGroup; block++) {
        const at = (g * layout.blocksPerGroup + block) * layout.blockBytes;
        // Preserve whatever `out` holds in the slots packing skips (zeros by contract).
        scratchBytes.set(out.subarray(at, at + scratchBytes.byteLength));
        packBlock(layout, kernelBits, biasBits, g, block, scratch, 0);
        out.set(scratchBytes, at);
      }
    }
  }
  recordPacking(packedBytes);
}

/** Runs of at least this many floats are copied with subarray/set (memcpy); shorter ones by loop. */
const SET_THRESHOLD = 16;

function packBlock(
  layout: GemmGoiLayout,
  kernel: Int32Array,
  bias: Int32Array | null,
  g: number,
  block: number,
  out: Int32Array,
  start: number,
): void {
  const { nc, kc, nr, kr, sr, paddedKc } = layout;
  const n0 = block * nr;
  const b = Math.min(nr, nc - n0);
  const rowBase = (g * nc + n0) * kc;
  let q = start;
  if (bias !== null) {
    const from = g * nc + n0;
    for (let o = 0; o < b; o++) out[q + o] = bias[from + o] as number;
  }
  q += nr;
  if (b < nr && layout.padding !== 'zeros') copyPaddingRows(layout, kernel, rowBase, b, out, q);

  if (kr === 1 && sr === 1) {
    // Plain transpose of the block: slot (t, o) holds kernel[n0 + o][t]. Writes run
    // sequentially through the block; the b source rows are read in step.
    if (b === nr && nr % 8 === 0) {
      // Full blocks of the common tilings (nr 8, 16, …): eight rows at a time.
      for (let h = 0; h < nr; h += 8) transposeRows8(kernel, rowBase + h * kc, kc, out, q + h, nr);
      return;
    }
    for (let o = 0; o < b; o++) {
      const row = rowBase + o * kc;
      let dst = q + o;
      for (let t = 0; t < kc; t++) {
        out[dst] = kernel[row + t] as number;
        dst += nr;
      }
    }
    return;
  }

  const skr = sr * kr;
  const mask = skr - 1;
  for (let t = 0; t < paddedKc; t += kr) {
    const groupStart = t & ~mask;
    for (let o = 0; o < b; o++) {
      // Each slot is one contiguous run of kr columns inside its sr·kr group.
      const col = groupStart + ((t + o * kr) & mask);
      if (col < kc) {
        const len = Math.min(kr, kc - col);
        const src = rowBase + o * kc + col;
        if (len >= SET_THRESHOLD) {
          out.set(kernel.subarray(src, src + len), q);
        } else {
          for (let j = 0; j < len; j++) out[q + j] = kernel[src + j] as number;
        }
      }
      q += kr;
    }
    q += (nr - b) * kr;
  }
}

/**
 * Fills rows b .. nr - 1 of a partial block (weights from `q`) with row b - 1's columns as
 * each row would take them, as the x32-packw ukernels do (see GemmPadding).
 */
function copyPaddingRows(
  layout: GemmGoiLayout,
  kernel: Int32Array,
  rowBase: number,
  b: number,
  out: Int32Array,
  q: number,
): void {
  const { kc, nr, kr, sr, paddedKc } = layout;
  const last = rowBase + (b - 1) * kc;
  // The final row of 'copy-last-u4' is loaded only by the 1..3-column remainder.
  const finalFrom = layout.padding === 'copy-last-u4' ? kc - (kc % 4) : 0;
  const mask = sr * kr - 1;
  for (let t = 0; t < paddedKc; t += kr) {
    const groupStart = t & ~mask;
    const slot = q + (t / kr) * nr * kr;
    for (let o = b; o < nr; o++) {
      const col = groupStart + ((t + o * kr) & mask);
      const from = o === nr - 1 ? Math.max(col, finalFrom) : col;
      const end = Math.min(col + kr, kc);
      for (let c = from; c < end; c++) out[slot + o * kr + (c - col)] = kernel[last + c] as number;
    }
  }
}

/**
 * Writes kernel rows rowBase .. rowBase + 7 (each kc long) interleaved: slot t of the block
 * gets the eight values of column t, then the next slot starts `stride` floats on. Eight
 * reads and eight sequential writes per step run ~2x faster than one strided row at a time.
 */
function transposeRows8(
  kernel: Int32Array,
  rowBase: number,
  kc: number,
  out: Int32Array,
  q: number,
  stride: number,
): void {
  const r0 = rowBase;
  const r1 = r0 + kc;
  const r2 = r1 + kc;
  const r3 = r2 + kc;
  const r4 = r3 + kc;
  const r5 = r4 + kc;
  const r6 = r5 + kc;
  const r7 = r6 + kc;
  let dst = q;
  for (let t = 0; t < kc; t++) {
    out[dst] = kernel[r0 + t] as number;
    out[dst + 1] = kernel[r1 + t] as number;
    out[dst + 2] = kernel[r2 + t] as number;
    out[dst + 3] = kernel[r3 + t] as number;
    out[dst + 4] = kernel[r4 + t] as number;
    out[dst + 5] = kernel[r5 + t] as number;
    out[dst + 6] = kernel[r6 + t] as number;
    out[dst + 7] = kernel[r7 + t] as number;
    dst += stride;
  }
}

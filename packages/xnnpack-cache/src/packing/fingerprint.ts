/** FNV-1a, 32-bit: a small stable hash for identity strings. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/**
 * Fingerprint of this package's f32 GEMM "goi" packer. Seeds only XOR shape and tiling
 * numbers, so they do not change when the packing algorithm does; bump the version in
 * this string whenever the packed layout changes.
 */
export const PACK_F32_GEMM_GOI_W_FINGERPRINT = fnv1a32('memlayer:pack_f32_gemm_goi_w:1');

import { PACKED_ALLOCATION_ALIGNMENT } from '../alignment.js';
import { PACK_F32_GEMM_GOI_W_FINGERPRINT } from '../packing/fingerprint.js';
import { PACKAGE_VERSION } from '../version.js';

/**
 * Default cache identity: packer library and version, packer fingerprint,
 * allocation alignment and byte order. Tiling per operator is in each entry's seed; a
 * change of the packing algorithm changes the fingerprint and so the identity.
 */
export const DEFAULT_CACHE_IDENTITY = [
  `@memlayer/xnnpack-cache@${PACKAGE_VERSION}`,
  `pack_f32_gemm_goi_w#${PACK_F32_GEMM_GOI_W_FINGERPRINT.toString(16).padStart(8, '0')}`,
  `align${PACKED_ALLOCATION_ALIGNMENT}`,
  'le',
].join(' / ');

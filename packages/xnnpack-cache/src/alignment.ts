/**
 * Alignment of every packed buffer handed out by reserveSpace. XNNPACK's
 * XNN_ALLOCATION_ALIGNMENT is 64 on x86-64 (16 on ARM, 4 on WASM); ExecuTorch's
 * kPackedAllocationAlignment is 64. We use the largest so one cache file fits all.
 */
export const PACKED_ALLOCATION_ALIGNMENT = 64;

/** Rounds up to a multiple (the rounding every memlayer package shares). */
export { alignUp as roundUp } from '@memlayer/internal';

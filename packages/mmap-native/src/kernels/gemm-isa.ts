/**
 * The instruction sets the GEMM kernels are built for: 'avx512f', 'avx2-fma' and 'sse2'
 * on x86-64 (each used where the CPU has it), 'neon' on arm64, 'portable' (plain C++)
 * everywhere.
 */
export type GemmIsa = 'avx512f' | 'avx2-fma' | 'sse2' | 'neon' | 'portable';

/** Each instruction set at the index of its code in the addon (src/native/kernels/cpu-isa.h). */
export const GEMM_ISA_CODES: readonly GemmIsa[] = Object.freeze([
  'portable',
  'sse2',
  'avx2-fma',
  'avx512f',
  'neon',
]);

/** The code that asks the addon for the widest instruction set the CPU has. */
export const BEST_GEMM_ISA_CODE = -1;

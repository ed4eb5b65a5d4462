import { tryLoadAddon } from '../backends/posix/addon.js';

/** An x86-64 CPU as Linux's /proc/cpuinfo shows it: what XNNPACK's choice of GEMM reads. */
export interface X86Cpu {
  /** SSE2, AVX, FMA3 and AVX-512F, each where the operating system saves its registers. */
  readonly sse2: boolean;
  readonly avx: boolean;
  readonly fma3: boolean;
  readonly avx512f: boolean;
  /** CPUID's vendor string: 'AuthenticAMD', 'GenuineIntel'... */
  readonly vendor: string;
  /** Family and model from CPUID leaf 1, extended as Linux reads them. */
  readonly family: number;
  readonly model: number;
}

interface X86CpuAddon {
  x86Cpu?(): X86Cpu | null;
}

/**
 * This CPU, read with CPUID by the addon in a few microseconds (reading /proc/cpuinfo takes
 * ~0.7 ms in a fresh process), or null: not x86-64, or no addon that can tell.
 */
export function x86Cpu(): X86Cpu | null {
  if (process.arch !== 'x64') return null;
  let addon: X86CpuAddon | null;
  try {
    addon = tryLoadAddon() as X86CpuAddon | null;
  } catch {
    // An addon that does not load only means no answer here: the caller reads the CPU its way.
    return null;
  }
  if (addon === null || typeof addon.x86Cpu !== 'function') return null;
  return Object.freeze(addon.x86Cpu());
}

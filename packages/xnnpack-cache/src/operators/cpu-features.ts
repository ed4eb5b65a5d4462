import { invalidArgument } from '../errors.js';

/**
 * What XNNPACK's f32 GEMM config reads of an x86-64 CPU: the hardware_config flags of the
 * kernel families it tries (highest first), and the one microarchitecture it singles out.
 */
export interface X64CpuFeatures {
  readonly arch: 'x64';
  readonly sse2: boolean;
  readonly avx: boolean;
  readonly fma3: boolean;
  /** AVX-512F that the XNNPACK build also compiled kernels for (stock builds do). */
  readonly avx512f: boolean;
  /** AMD Zen 1 (family 17h, models 00h-1Fh): cpuinfo's cpuinfo_uarch_zen. */
  readonly zen: boolean;
}

/** The arm64 cores (cpuinfo uarch of the first, biggest core) whose GEMM config differs. */
export type Arm64Core = 'cortex-x4' | 'oryon' | 'exynos-m1' | 'exynos-m2' | 'other';

/** What XNNPACK's f32 GEMM config reads of an arm64 CPU: only the microarchitecture. */
export interface Arm64CpuFeatures {
  readonly arch: 'arm64';
  readonly core: Arm64Core;
}

/** The CPU whose XNNPACK choice of GEMM ukernel a cache follows; null: unknown. */
export type CpuFeatures = X64CpuFeatures | Arm64CpuFeatures;

const X64_NAMES = ['sse2', 'avx', 'fma3', 'avx512f', 'zen'] as const;
const ARM64_CORES: readonly Arm64Core[] = ['cortex-x4', 'oryon', 'exynos-m1', 'exynos-m2', 'other'];

/**
 * "x64:sse2,avx,fma3", "arm64:cortex-x4", "arm64" (any other core) or "none" (unknown:
 * the nr8kr1sr1 tiling for every layer): how a command line names a CPU.
 */
export function parseCpuFeatures(text: string): CpuFeatures | null {
  if (typeof text !== 'string') invalidArgument('a string', 'cpu features', text);
  const [arch, list = ''] = text.trim().toLowerCase().split(':', 2) as [string, string?];
  const names = list === '' ? [] : list.split(',').map((name) => name.trim());
  if (arch === 'none' && names.length === 0) return null;
  if (arch === 'x64' || arch === 'x86-64' || arch === 'x86_64') {
    for (const name of names) {
      if (!(X64_NAMES as readonly string[]).includes(name)) {
        invalidArgument(`x64 features among ${X64_NAMES.join(', ')}`, 'cpu features', text);
      }
    }
    const has = (name: (typeof X64_NAMES)[number]) => names.includes(name);
    return {
      arch: 'x64',
      sse2: has('sse2'),
      avx: has('avx'),
      fma3: has('fma3'),
      avx512f: has('avx512f'),
      zen: has('zen'),
    };
  }
  if ((arch === 'arm64' || arch === 'aarch64') && names.length <= 1) {
    const core = (names[0] ?? 'other') as Arm64Core;
    if (ARM64_CORES.includes(core)) return { arch: 'arm64', core };
  }
  return invalidArgument('"x64:<features>", "arm64[:<core>]" or "none"', 'cpu features', text);
}

/** The inverse of parseCpuFeatures. */
export function describeCpuFeatures(features: CpuFeatures | null): string {
  if (features === null) return 'none';
  if (features.arch === 'arm64') return `arm64:${features.core}`;
  return `x64:${X64_NAMES.filter((name) => features[name]).join(',')}`;
}

/** Checks a CpuFeatures given as an option (null: unknown). */
export function assertCpuFeatures(value: unknown, what: string): CpuFeatures | null {
  if (value === null) return null;
  if (value !== null && typeof value === 'object') {
    const features = value as Partial<X64CpuFeatures> & Partial<Arm64CpuFeatures>;
    if (features.arch === 'x64' && X64_NAMES.every((name) => typeof features[name] === 'boolean')) {
      return Object.freeze({ ...(value as X64CpuFeatures) });
    }
    if (features.arch === 'arm64' && ARM64_CORES.includes(features.core as Arm64Core)) {
      return Object.freeze({ ...(value as Arm64CpuFeatures) });
    }
  }
  return invalidArgument('x64 or arm64 CPU features, or null', what, value);
}

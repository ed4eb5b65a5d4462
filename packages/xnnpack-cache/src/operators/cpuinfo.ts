import { type X86Cpu, x86Cpu } from '@memlayer/mmap-native';
import { nodeFs } from '../node-fs.js';
import type { Arm64Core, CpuFeatures } from './cpu-features.js';

/** What detection found: the features, or null and why (the tiling is then nr8kr1sr1). */
export interface CpuFeaturesDetection {
  readonly features: CpuFeatures | null;
  /** Where they came from ('cpuid', '/proc/cpuinfo', 'platform'), or why none were found. */
  readonly source: string;
}

/**
 * The running CPU as XNNPACK's f32 GEMM config sees it: on x86-64 read with CPUID by
 * mmap-native's addon (a few microseconds), else as detectCpuFeatures reads it (~0.7 ms of
 * a fresh process on Linux). Read on each call: a cache or manager calls it once and keeps
 * the answer.
 */
export function runningCpuFeatures(cpu: X86Cpu | null = x86Cpu()): CpuFeaturesDetection {
  if (cpu === null) return detectCpuFeatures();
  return {
    features: {
      arch: 'x64',
      sse2: cpu.sse2,
      avx: cpu.avx,
      fma3: cpu.fma3,
      avx512f: cpu.avx512f,
      zen: isZen1(cpu.vendor, cpu.family, cpu.model),
    },
    source: 'cpuid',
  };
}

/** The running CPU as XNNPACK's f32 GEMM config sees it, from /proc/cpuinfo on Linux. */
export function detectCpuFeatures(
  platform: string = process.platform,
  arch: string = process.arch,
  read: (path: string) => string = (path) => nodeFs().readFileSync(path, 'latin1'),
): CpuFeaturesDetection {
  // XNNPACK 92a7ad50 src/configs/gemm-config.c: on iOS and macOS the arm64 config ignores the core.
  if (platform === 'darwin' && arch === 'arm64') {
    return { features: { arch: 'arm64', core: 'other' }, source: 'platform' };
  }
  if (platform !== 'linux' || (arch !== 'x64' && arch !== 'arm64')) {
    return { features: null, source: `no CPU detection on ${platform} ${arch}` };
  }
  let text: string;
  try {
    text = read('/proc/cpuinfo');
  } catch (error) {
    return { features: null, source: `/proc/cpuinfo unreadable (${(error as Error).message})` };
  }
  const features = arch === 'x64' ? x64FromCpuinfo(text) : arm64FromCpuinfo(text);
  return features === null
    ? { features: null, source: '/proc/cpuinfo has no CPU description' }
    : { features, source: '/proc/cpuinfo' };
}

/** The first processor's value of `key` in /proc/cpuinfo text. */
function field(text: string, key: string): string | undefined {
  const match = new RegExp(`^${key}\\s*:(.*)$`, 'm').exec(text);
  return match?.[1]?.trim();
}

/** x86-64 features from /proc/cpuinfo (the kernel lists only what it enabled). */
export function x64FromCpuinfo(text: string): CpuFeatures | null {
  const flags = field(text, 'flags');
  if (flags === undefined) return null;
  const set = new Set(flags.split(/\s+/));
  const family = Number(field(text, 'cpu family'));
  const model = Number(field(text, 'model'));
  return {
    arch: 'x64',
    sse2: set.has('sse2'),
    avx: set.has('avx'),
    fma3: set.has('fma'),
    avx512f: set.has('avx512f'),
    zen: isZen1(field(text, 'vendor_id'), family, model),
  };
}

/**
 * Whether XNNPACK counts the CPU as Zen 1, the one microarchitecture its x86-64 GEMM
 * config singles out. cpuinfo f9a03241 src/x86/uarch.c: AMD family 17h, extended model 0
 * or 1. (Its Hygon Dhyana case matches family 0 only, which no CPU reports.)
 */
function isZen1(vendor: string | undefined, family: number, model: number): boolean {
  return vendor === 'AuthenticAMD' && family === 0x17 && model >> 4 <= 1;
}

/**
 * arm64 features from /proc/cpuinfo. XNNPACK reads the uarch of cpuinfo's first core
 * (the biggest by its core score, then frequency); the cores that change the GEMM config
 * are always the biggest of the chips that carry them, so any of them decides.
 */
export function arm64FromCpuinfo(text: string): CpuFeatures | null {
  const cores = new Set<Arm64Core>();
  let described = false;
  for (const block of text.split(/\n\s*\n/)) {
    const implementer = Number(field(block, 'CPU implementer'));
    const variant = Number(field(block, 'CPU variant') ?? 0);
    const part = Number(field(block, 'CPU part'));
    if (!Number.isInteger(implementer) || !Number.isInteger(part)) continue;
    described = true;
    cores.add(coreOf(implementer, variant, part));
  }
  if (!described) return null;
  const decisive = [...cores].find((core) => core !== 'other');
  return { arch: 'arm64', core: decisive ?? 'other' };
}

// cpuinfo f9a03241 src/arm/uarch.c: ARM 0xD82 Cortex-X4; Qualcomm 0x001 Oryon; Samsung part 0x001 variant 1 M1, 4 M2.
function coreOf(implementer: number, variant: number, part: number): Arm64Core {
  if (implementer === 0x41 && part === 0xd82) return 'cortex-x4';
  if (implementer === 0x51 && part === 0x001) return 'oryon';
  if (implementer === 0x53 && part === 0x001 && variant === 1) return 'exynos-m1';
  if (implementer === 0x53 && part === 0x001 && variant === 4) return 'exynos-m2';
  return 'other';
}

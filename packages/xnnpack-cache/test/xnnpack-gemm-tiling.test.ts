import { describe, expect, it } from 'vitest';
import {
  arm64FromCpuinfo,
  type CpuFeatures,
  createFullyConnectedNcF32,
  DEFAULT_GEMM_TILING,
  describeCpuFeatures,
  detectCpuFeatures,
  fullyConnectedSeed,
  GEMM_TILINGS,
  type GemmTiling,
  InMemoryNamedDataMap,
  parseCpuFeatures,
  tensorView,
  XNNWeightsCache,
  XNNWeightsCacheManager,
  x64FromCpuinfo,
  xnnpackGemmConfigs,
  xnnpackGemmTiling,
  xnnUseNr2,
} from '../src/index.js';
import { runningCpuFeatures } from '../src/operators/cpuinfo.js';
import { randomFloats, referenceMatmul } from './reference.js';

const code = (c: string) => expect.objectContaining({ code: c });
const x64 = (
  levels: Partial<Record<'avx' | 'fma3' | 'avx512f' | 'zen', boolean>>,
): CpuFeatures => ({
  arch: 'x64',
  sse2: true,
  avx: false,
  fma3: false,
  avx512f: false,
  zen: false,
  ...levels,
});
const FMA3 = x64({ avx: true, fma3: true });
const AVX512 = x64({ avx: true, fma3: true, avx512f: true });

/** nr, kr, sr and padding of a tiling, as one string. */
const named = (t: GemmTiling) => `nr${t.nr}kr${t.kr}sr${t.sr} ${t.padding ?? 'zeros'}`;
const configs = (features: CpuFeatures) => {
  const found = xnnpackGemmConfigs(features);
  return found && { default: named(found.default), nr2: named(found.nr2) };
};

describe('XNNPACK 92a7ad50 f32 GEMM configs', () => {
  it('gives each x86-64 level its default and nr2 tilings, padded as its packw ukernels pad', () => {
    expect(configs(x64({}))).toEqual({
      default: 'nr8kr1sr1 copy-last',
      nr2: 'nr2kr4sr1 copy-last',
    });
    expect(configs(x64({ avx: true }))).toEqual({
      default: 'nr16kr1sr1 copy-last-u4',
      nr2: 'nr8kr1sr1 copy-last-u4',
    });
    expect(configs(FMA3)).toEqual(configs(x64({ avx: true })));
    expect(configs(x64({ avx: true, fma3: true, zen: true }))).toEqual({
      default: 'nr16kr1sr4 zeros',
      nr2: 'nr8kr1sr1 copy-last-u4',
    });
    expect(configs(AVX512)).toEqual({
      default: 'nr32kr1sr1 copy-last-u4',
      nr2: 'nr16kr1sr1 copy-last-u4',
    });
  });

  it('gives arm64 nr8 unless the big core is a Cortex-X4, Oryon or Exynos M1/M2; nr2 is 2', () => {
    const arm = (core: 'cortex-x4' | 'oryon' | 'exynos-m1' | 'exynos-m2' | 'other') =>
      xnnpackGemmConfigs({ arch: 'arm64', core });
    expect(arm('other')).toEqual({ default: GEMM_TILINGS.nr8kr1sr1, nr2: GEMM_TILINGS.nr2kr1sr1 });
    expect(arm('cortex-x4')?.default).toEqual({ nr: 16, kr: 1, sr: 1 });
    expect(arm('oryon')?.default).toEqual({ nr: 16, kr: 1, sr: 1 });
    expect(arm('exynos-m1')?.default).toEqual({ nr: 8, kr: 1, sr: 4 });
    expect(arm('exynos-m2')?.default).toEqual({ nr: 8, kr: 1, sr: 4 });
  });

  it('takes nr2 when the default nr is wider than the layer or wastes over 1% more', () => {
    expect(xnnUseNr2(16, 8, 16)).toBe(false);
    expect(xnnUseNr2(16, 8, 12)).toBe(true); // 16 > 12
    expect(xnnUseNr2(16, 8, 4)).toBe(true);
    expect(xnnUseNr2(16, 8, 128)).toBe(false); // no waste
    expect(xnnUseNr2(16, 8, 100)).toBe(true); // 12 wasted vs 4
    // 8 wasted columns: more than 1% of 792, not of 808.
    expect(xnnUseNr2(16, 8, 792)).toBe(true);
    expect(xnnUseNr2(16, 8, 808)).toBe(false);
    // nr2 wastes as much (7 columns each): keep the default.
    expect(xnnUseNr2(16, 8, 25)).toBe(false);
  });

  it('tiles the layers ExecuTorch was measured on (FMA3): [16, 8] nr16, [12, 16] and [4, 12] nr8', () => {
    expect(xnnpackGemmTiling(FMA3, 16)).toMatchObject(GEMM_TILINGS.nr16kr1sr1);
    expect(xnnpackGemmTiling(FMA3, 12)).toMatchObject(GEMM_TILINGS.nr8kr1sr1);
    expect(xnnpackGemmTiling(FMA3, 4)).toMatchObject(GEMM_TILINGS.nr8kr1sr1);
    expect(xnnpackGemmTiling(AVX512, 128)).toMatchObject(GEMM_TILINGS.nr32kr1sr1);
    expect(xnnpackGemmTiling(AVX512, 16)).toMatchObject(GEMM_TILINGS.nr16kr1sr1);
    expect(xnnpackGemmTiling(x64({}), 4)).toMatchObject(GEMM_TILINGS.nr2kr4sr1);
    expect(xnnpackGemmTiling(null, 128)).toBe(DEFAULT_GEMM_TILING);
  });
});

describe('CPU features', () => {
  const ZEN5 =
    'processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nflags\t\t: fpu sse sse2 ssse3 fma sse4_1 avx avx2 avx512f avx512bw\n\nprocessor\t: 1\n';
  it('reads x86-64 flags and Zen 1 from /proc/cpuinfo', () => {
    expect(x64FromCpuinfo(ZEN5)).toEqual(AVX512);
    const zen1 = ZEN5.replace('cpu family\t: 26', 'cpu family\t: 23')
      .replace('model\t\t: 2', 'model\t\t: 24')
      .replace(' avx512f avx512bw', '');
    expect(x64FromCpuinfo(zen1)).toEqual(x64({ avx: true, fma3: true, zen: true }));
    const zen2 = zen1.replace('model\t\t: 24', 'model\t\t: 49');
    expect(x64FromCpuinfo(zen2)).toEqual(FMA3);
    expect(x64FromCpuinfo('processor\t: 0\n')).toBeNull();
  });

  it('reads the deciding arm64 core from any processor of /proc/cpuinfo', () => {
    const cpu = (implementer: number, variant: number, part: number) =>
      `processor\t: 0\nCPU implementer\t: 0x${implementer.toString(16)}\nCPU variant\t: 0x${variant}\nCPU part\t: 0x${part.toString(16)}\n`;
    // Dimensity 9300: Cortex-X4 + A720 + A520.
    const mixed = [cpu(0x41, 0, 0xd80), cpu(0x41, 0, 0xd81), cpu(0x41, 0, 0xd82)].join('\n');
    expect(arm64FromCpuinfo(mixed)).toEqual({ arch: 'arm64', core: 'cortex-x4' });
    expect(arm64FromCpuinfo(cpu(0x41, 1, 0xd0b))).toEqual({ arch: 'arm64', core: 'other' });
    expect(arm64FromCpuinfo(cpu(0x53, 1, 0x001))).toEqual({ arch: 'arm64', core: 'exynos-m1' });
    expect(arm64FromCpuinfo(cpu(0x53, 4, 0x001))).toEqual({ arch: 'arm64', core: 'exynos-m2' });
    expect(arm64FromCpuinfo(cpu(0x51, 1, 0x001))).toEqual({ arch: 'arm64', core: 'oryon' });
    expect(arm64FromCpuinfo('Hardware\t: foo\n')).toBeNull();
  });

  it('detects per platform, and says why when it cannot', () => {
    const fail = () => {
      throw new Error('EACCES');
    };
    expect(detectCpuFeatures('darwin', 'arm64', fail)).toEqual({
      features: { arch: 'arm64', core: 'other' },
      source: 'platform',
    });
    expect(detectCpuFeatures('win32', 'x64', fail)).toEqual({
      features: null,
      source: 'no CPU detection on win32 x64',
    });
    expect(detectCpuFeatures('linux', 'x64', fail).features).toBeNull();
    expect(detectCpuFeatures('linux', 'x64', fail).source).toContain('EACCES');
    expect(detectCpuFeatures('linux', 'x64', () => ZEN5)).toEqual({
      features: AVX512,
      source: '/proc/cpuinfo',
    });
  });

  it('reads the running x86-64 CPU with CPUID, as /proc/cpuinfo describes it', () => {
    const running = runningCpuFeatures();
    if (process.arch === 'x64' && process.platform === 'linux') {
      expect(running).toEqual({ features: detectCpuFeatures().features, source: 'cpuid' });
    }
    const x86 = { sse2: true, avx: true, fma3: true, avx512f: false };
    const amd = (family: number, model: number) =>
      runningCpuFeatures({ ...x86, vendor: 'AuthenticAMD', family, model }).features;
    expect(amd(0x17, 0x01)).toEqual({ arch: 'x64', ...x86, zen: true });
    expect(amd(0x17, 0x18)).toEqual({ arch: 'x64', ...x86, zen: true });
    expect(amd(0x17, 0x20)).toEqual({ arch: 'x64', ...x86, zen: false });
    expect(amd(0x19, 0x01)).toEqual({ arch: 'x64', ...x86, zen: false });
    const intel = { ...x86, vendor: 'GenuineIntel', family: 0x17, model: 0x01 };
    expect(runningCpuFeatures(intel).features).toEqual({ arch: 'x64', ...x86, zen: false });
    // No answer from the addon: /proc/cpuinfo (or what the platform allows) instead.
    expect(runningCpuFeatures(null)).toEqual(detectCpuFeatures());
  });

  it('parses and describes command-line specs', () => {
    expect(parseCpuFeatures('x64:sse2,avx,fma3')).toEqual(FMA3);
    expect(parseCpuFeatures('arm64')).toEqual({ arch: 'arm64', core: 'other' });
    expect(parseCpuFeatures('arm64:cortex-x4')).toEqual({ arch: 'arm64', core: 'cortex-x4' });
    expect(parseCpuFeatures('none')).toBeNull();
    for (const spec of ['x64:sse2,avx,fma3,avx512f', 'arm64:oryon', 'none']) {
      expect(describeCpuFeatures(parseCpuFeatures(spec))).toBe(spec);
    }
    expect(() => parseCpuFeatures('x64:avx2')).toThrow(code('ERR_CACHE_INVALID_ARGUMENT'));
    expect(() => parseCpuFeatures('riscv')).toThrow(code('ERR_CACHE_INVALID_ARGUMENT'));
  });
});

describe('the default tiling of an operator', () => {
  const NC = 12;
  const KC = 16;
  const weight = randomFloats(NC * KC, 5);
  const bias = randomFloats(NC, 6);
  const create = (cache: XNNWeightsCache, tiling?: typeof GEMM_TILINGS.nr4kr2sr2) => {
    cache.initializeForRuntime(
      new InMemoryNamedDataMap([tensorView('w', [NC, KC], weight), tensorView('b', [NC], bias)]),
    );
    const op = createFullyConnectedNcF32({
      cache,
      inputChannels: KC,
      outputChannels: NC,
      kernel: cache.loadUnpackedData('w'),
      bias: cache.loadUnpackedData('b'),
      ...(tiling === undefined ? {} : { tiling }),
    });
    cache.finalizeForRuntime();
    return op;
  };

  it("is XNNPACK's choice on the cache's CPU, seeded as XNNPACK seeds it", () => {
    const op = create(new XNNWeightsCache({ cpuFeatures: AVX512 }));
    // 12 outputs: nr32 is wider, so the nr2 config (nr16).
    expect(op.tiling).toEqual({ nr: 16, kr: 1, sr: 1, padding: 'copy-last-u4' });
    expect(op.seed).toBe(
      fullyConnectedSeed({ outputChannels: NC, inputChannels: KC, nr: 16, kr: 1, sr: 1 }),
    );
    const input = randomFloats(2 * KC, 7);
    const expected = referenceMatmul(input, 2, weight, bias, NC, KC);
    const output = op.run(input, 2);
    for (let i = 0; i < expected.length; i++)
      expect(output[i]).toBeCloseTo(expected[i] as number, 4);
  });

  it('gives way to an explicit tiling, and is nr8kr1sr1 on an unknown CPU', () => {
    const explicit = create(new XNNWeightsCache({ cpuFeatures: AVX512 }), GEMM_TILINGS.nr4kr2sr2);
    expect(explicit.tiling).toBe(GEMM_TILINGS.nr4kr2sr2);
    const unknown = create(new XNNWeightsCache({ cpuFeatures: null }));
    expect(unknown.tiling).toBe(GEMM_TILINGS.nr8kr1sr1);
    expect(new XNNWeightsCache({ cpuFeatures: null }).cpuFeatures).toEqual({
      features: null,
      source: 'given',
    });
  });

  it('comes from the manager to every cache it creates, heap-only or not', () => {
    const manager = new XNNWeightsCacheManager({ cpuFeatures: FMA3 });
    expect(manager.cpuFeatures).toEqual({ features: FMA3, source: 'given' });
    const handle = manager.acquire('');
    expect(handle.cache.cpuFeatures.features).toEqual(FMA3);
    expect(handle.cache.gemmTiling(128)).toMatchObject(GEMM_TILINGS.nr16kr1sr1);
    handle.release();
  });

  it('refuses CPU features of the wrong shape', () => {
    expect(
      () => new XNNWeightsCache({ cpuFeatures: { arch: 'x64' } as unknown as CpuFeatures }),
    ).toThrow(code('ERR_CACHE_INVALID_ARGUMENT'));
    expect(
      () => new XNNWeightsCacheManager({ cpuFeatures: 'avx' as unknown as CpuFeatures }),
    ).toThrow(code('ERR_CACHE_INVALID_ARGUMENT'));
  });
});

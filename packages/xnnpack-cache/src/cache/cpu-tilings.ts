import { assertCpuFeatures, type CpuFeatures } from '../operators/cpu-features.js';
import { type CpuFeaturesDetection, runningCpuFeatures } from '../operators/cpuinfo.js';
import type { GemmTiling } from '../operators/tiling.js';
import {
  tilingFor,
  type XnnpackGemmConfigs,
  xnnpackGemmConfigs,
} from '../operators/xnnpack-gemm-tiling.js';
import { emitCacheWarning } from '../storage/warnings.js';

/**
 * The CPU a cache (or manager) packs for and the default tiling it gives each layer. The
 * CPU is the one given, else the running one, detected once when first asked for.
 */
export class CpuTilings {
  readonly #given: CpuFeatures | null | undefined;
  #detection: CpuFeaturesDetection | undefined;
  #configs: XnnpackGemmConfigs | null | undefined;
  #lastChannels = 0;
  #lastTiling: GemmTiling | null = null;

  /** `features`: undefined detects, null means unknown (nr8kr1sr1 for every layer). */
  constructor(features: CpuFeatures | null | undefined, what: string) {
    this.#given = features === undefined ? undefined : assertCpuFeatures(features, what);
  }

  /** The features and where they came from ('given' when passed as an option). */
  get detection(): CpuFeaturesDetection {
    if (this.#detection === undefined) {
      if (this.#given !== undefined) {
        this.#detection = { features: this.#given, source: 'given' };
      } else {
        this.#detection = runningCpuFeatures();
        if (this.#detection.features === null) {
          emitCacheWarning(
            'MEMLAYER_CACHE_CPU_UNKNOWN',
            `Cannot tell which GEMM kernels XNNPACK picks on this CPU (${this.#detection.source}): every layer is packed nr8kr1sr1, which ExecuTorch's cache files may not share`,
          );
        }
      }
    }
    return this.#detection;
  }

  /** The tiling XNNPACK packs a layer of `outputChannels` with on this CPU. */
  tiling(outputChannels: number): GemmTiling {
    // A model's layers come one after another, mostly of one width: asked again, the
    // answer is the last one (the configs never change once worked out).
    if (outputChannels === this.#lastChannels && this.#lastTiling !== null) return this.#lastTiling;
    if (this.#configs === undefined) this.#configs = xnnpackGemmConfigs(this.detection.features);
    const tiling = tilingFor(this.#configs, outputChannels);
    this.#lastChannels = outputChannels;
    this.#lastTiling = tiling;
    return tiling;
  }
}

import type { FullyConnectedSettings } from './fully-connected.js';
import type { OperatorSetup } from './operator-setup.js';
import type { GemmTiling } from './tiling.js';

/** Where an XNNWeightsCache keeps the last setup of the operators created over it. */
export const LAST_SETUP: unique symbol = Symbol('memlayer.lastOperatorSetup');

/**
 * The last operator setup made over one cache, and the options it came from. A model
 * creates its layers one after another, mostly of a few shapes: a layer like the one
 * before reuses its checked setup and its prepared native GEMM (without it, a warm start
 * of 1024 layers took 20-50% longer and its first forward twice as long).
 */
export class LastOperatorSetup {
  #setup: OperatorSetup | null = null;
  #inputChannels = 0;
  #outputChannels = 0;
  #tiling: GemmTiling | null = null;
  #extraBytes: number | undefined;
  #outputMin: number | undefined;
  #outputMax: number | undefined;
  #operatorType: number | undefined;
  #revision: string | undefined;
  #cacheRevision: string | undefined;
  #kernels: string | undefined;
  #threads: number | undefined;

  /** The setup of the last options when `options` (with `tiling`) equal them, else null. */
  get(options: FullyConnectedSettings, tiling: GemmTiling): OperatorSetup | null {
    if (
      this.#setup !== null &&
      options.inputChannels === this.#inputChannels &&
      options.outputChannels === this.#outputChannels &&
      tiling === this.#tiling &&
      options.extraBytes === this.#extraBytes &&
      // Object.is: a bound of -0 clamps to -0, one of 0 to 0.
      Object.is(options.outputMin, this.#outputMin) &&
      Object.is(options.outputMax, this.#outputMax) &&
      options.operatorType === this.#operatorType &&
      options.xnnpackRevision === this.#revision &&
      options.cache.xnnpackRevision === this.#cacheRevision &&
      options.kernels === this.#kernels &&
      options.threads === this.#threads
    ) {
      return this.#setup;
    }
    return null;
  }

  /** Remembers `setup` as made from `options` and a frozen `tiling`. */
  set(options: FullyConnectedSettings, tiling: GemmTiling, setup: OperatorSetup): void {
    this.#setup = setup;
    this.#inputChannels = options.inputChannels;
    this.#outputChannels = options.outputChannels;
    this.#tiling = tiling;
    this.#extraBytes = options.extraBytes;
    this.#outputMin = options.outputMin;
    this.#outputMax = options.outputMax;
    this.#operatorType = options.operatorType;
    this.#revision = options.xnnpackRevision;
    this.#cacheRevision = options.cache.xnnpackRevision;
    this.#kernels = options.kernels;
    this.#threads = options.threads;
  }
}

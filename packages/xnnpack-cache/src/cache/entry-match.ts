/** How a look-up key relates to the cache's entries. */
export const UNNAMED = 0;
export const MISS = 1;
/** Name found, but packed by another ukernel (seed or fingerprint differs). */
export const STALE_SEED = 2;
/** Name, seed and fingerprint found, but another layout or size. */
export const STALE_LAYOUT = 3;
export const HIT = 4;
export type Found =
  | typeof UNNAMED
  | typeof MISS
  | typeof STALE_SEED
  | typeof STALE_LAYOUT
  | typeof HIT;

/**
 * Entry names: the kernel name immediately followed by the bias name, no separator
 * (ExecuTorch's naming). Once an entry is found or inserted, the cache remembers its own
 * name string per kernel name, so the next look-up of that pair (a second runtime in the
 * same process) builds no string and finds its key by identity; nothing but a map slot is
 * kept per entry.
 */
export class EntryNames {
  readonly #byKernel = new Map<string, string>();

  of(kernelName: string, biasName: string): string {
    const known = this.#byKernel.get(kernelName);
    // Every remembered name starts with its kernel name: the length and the suffix decide.
    if (
      known !== undefined &&
      known.length === kernelName.length + biasName.length &&
      known.endsWith(biasName)
    ) {
      return known;
    }
    return kernelName + biasName;
  }

  /** `name` is the cache's own string for the entry of `kernelName` + some bias name. */
  remember(kernelName: string, name: string): void {
    if (this.#byKernel.get(kernelName) !== name) this.#byKernel.set(kernelName, name);
  }

  clear(): void {
    this.#byKernel.clear();
  }
}

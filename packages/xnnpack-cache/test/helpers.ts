import {
  HeapStorage,
  InMemoryNamedDataMap,
  type LookUpKey,
  type OpenContext,
  type PackingLayout,
  type StoredEntry,
  tensorView,
  type XNNWeightsCache,
} from '../src/index.js';

export const SEED = 0x1234;
export const FINGERPRINT = 0xabcd;

export function namedMap(): InMemoryNamedDataMap {
  return new InMemoryNamedDataMap([
    tensorView('weight', [2, 2], new Float32Array([1, 2, 3, 4])),
    tensorView('bias', [2], new Float32Array([5, 6])),
    tensorView('weight2', [2, 2], new Float32Array([7, 8, 9, 10])),
  ]);
}

export function key(kernel: object, bias: object | null = null, seed = SEED): LookUpKey {
  return { seed, kernel, bias, fingerprint: FINGERPRINT };
}

/** Provider-side insert of `size` bytes filled with `fill`, as an operator would on a miss. */
export function insert(cache: XNNWeightsCache, lookUpKey: LookUpKey, fill = 1, size = 64): number {
  const buffer = cache.reserveSpace(size);
  if (buffer === null) throw new Error('reserveSpace failed');
  buffer.fill(fill);
  return cache.lookUpOrInsert(lookUpKey, buffer, size);
}

/**
 * Heap storage that presents entries on first open, as a file-backed storage does after
 * reading a saved index; it records the seam calls the cache makes.
 */
export class PreloadedStorage extends HeapStorage {
  readonly opens: OpenContext[] = [];
  readonly persisted: string[][] = [];
  /** The entries of the last persist call. */
  lastPersisted: readonly StoredEntry[] = [];
  syncs = 0;
  closes = 0;
  #preload: StoredEntry[];
  /** Names the next persist call reports durable. */
  durable: string[] = [];

  constructor(
    preload: readonly {
      name: string;
      bytes: Uint8Array;
      seed: number;
      fingerprint: number;
      layout?: PackingLayout;
    }[] = [],
  ) {
    super();
    this.#preload = preload.map((entry) => {
      const region = this.reserve(entry.bytes.byteLength, { persistable: true });
      if (region === null) throw new Error('reserve failed');
      region.bytes.set(entry.bytes);
      return {
        name: entry.name,
        seed: entry.seed,
        fingerprint: entry.fingerprint,
        dataSize: entry.bytes.byteLength,
        region,
        ...(entry.layout === undefined ? {} : { layout: entry.layout }),
      };
    });
  }

  override open(context: OpenContext): readonly StoredEntry[] {
    this.opens.push(context);
    if (context.hasEntries) return [];
    const loaded = this.#preload;
    this.#preload = [];
    return loaded;
  }

  override sync(): void {
    this.syncs++;
  }

  override persist(entries: readonly StoredEntry[]): readonly string[] {
    this.persisted.push(entries.map((entry) => entry.name));
    this.lastPersisted = entries;
    const durable = this.durable;
    this.durable = [];
    return durable;
  }

  override close(): void {
    this.closes++;
    super.close();
  }
}

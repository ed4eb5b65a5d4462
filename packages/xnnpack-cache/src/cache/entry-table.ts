import { layoutsEqual, type PackingLayout } from '../packing/packing-layout.js';
import type { LoadedEntryColumns, PackedRegion, StoredEntry } from '../storage/packed-storage.js';
import { AMBIGUOUS, type Found, HIT, STALE_LAYOUT, STALE_SEED } from './entry-match.js';
import type { PackedDataMeta } from './packed-data-meta.js';
import type { PackedShapeKey } from './provider.js';

const IN_CURRENT_RUNTIME = 1;
const FROM_LOAD = 2;
/** The row its name maps to (not superseded by a repack, not deleted). */
const CURRENT = 4;
/** lastUsed of an entry never looked up or inserted in this process (loaded without a tick). */
const NO_TICK = -1;
/** #hint after a miss: no row is tried before the map. */
const NO_HINT = -1;
/** rowOf for a name without an entry. */
export const NO_ROW = -1;

/**
 * The named entries of a cache (ExecuTorch's PackedDataMeta per name) as columns: a name
 * maps to a row, a row's fields live in plain arrays. A warm start loads thousands of
 * entries and keeps them all: one map slot per entry instead of one object.
 * A repack of a name appends a row; the name then maps to the new one.
 */
export class EntryTable {
  readonly #rows = new Map<string, number>();
  /** Row → entry name, so a look-up can check the hinted row by one compare. */
  #names: string[] = [];
  /** The row after the last one `find` found: where a start repeating an earlier one looks next. */
  #hint = 0;
  /** Counts adds and deletes: a miss stays a miss while it is unchanged. */
  #changes = 0;
  #offset: number[] = [];
  #dataSize: number[] = [];
  #refCount: number[] = [];
  #flags: number[] = [];
  #seed: number[] = [];
  #fingerprint: number[] = [];
  #layout: Array<PackingLayout | undefined> = [];
  #lastUsed: number[] = [];

  get size(): number {
    return this.#rows.size;
  }

  /** Changes with every add and delete (and clear). */
  get changes(): number {
    return this.#changes;
  }

  rowOf(name: string): number {
    return this.#rows.get(name) ?? NO_ROW;
  }

  has(name: string): boolean {
    return this.#rows.has(name);
  }

  /**
   * rowOf for a look-up: first tries the row after the last one found. A warm start of the
   * same program looks its entries up in the order the cold start inserted (and saved)
   * them, so a fresh name usually meets its row by one string compare, without being
   * hashed for the map.
   */
  find(name: string): number {
    const hint = this.#hint;
    if (
      hint >= 0 &&
      hint < this.#names.length &&
      ((this.#flags[hint] as number) & CURRENT) !== 0 &&
      this.#names[hint] === name
    ) {
      this.#hint = hint + 1;
      return hint;
    }
    const row = this.#rows.get(name);
    if (row === undefined) {
      // A cold start misses every name: compare none with a row until the map finds one.
      this.#hint = NO_HINT;
      return NO_ROW;
    }
    this.#hint = row + 1;
    return row;
  }

  /**
   * Adds (or replaces) the entry of `name`; `lastUsed` < 0 means no tick yet. `replaced` is
   * the name's current row when the caller knows it (a repack), else NO_ROW.
   */
  add(
    name: string,
    offset: number,
    dataSize: number,
    seed: number,
    fingerprint: number,
    layout: PackingLayout | undefined,
    refCount: number,
    fromLoad: boolean,
    inCurrentRuntime: boolean,
    lastUsed: number,
    replaced: number,
  ): number {
    const row = this.#offset.length;
    this.#changes++;
    this.#names.push(name);
    this.#offset.push(offset);
    this.#dataSize.push(dataSize);
    this.#refCount.push(refCount);
    this.#flags.push(
      CURRENT | (fromLoad ? FROM_LOAD : 0) | (inCurrentRuntime ? IN_CURRENT_RUNTIME : 0),
    );
    this.#seed.push(seed);
    this.#fingerprint.push(fingerprint);
    this.#layout.push(layout);
    this.#lastUsed.push(lastUsed < 0 ? NO_TICK : lastUsed);
    const rows = this.#rows;
    const before = rows.size;
    rows.set(name, row);
    if (replaced !== NO_ROW) this.#notCurrent(replaced);
    else if (rows.size === before) this.#supersededBy(name, row);
    return row;
  }

  /**
   * Adds the entries a storage loaded, entry `i` at offset `firstOffset + i`, as `add`
   * would with no reference, no tick and fromLoad set. Into an empty table (every warm
   * start) the columns are made at their length and written in one pass: pushing onto
   * nine growing arrays cost twice as much at 16384 entries.
   */
  addLoaded(loaded: LoadedEntryColumns, firstOffset: number): void {
    const n = loaded.names.length;
    const { fingerprints, layouts } = loaded;
    if (this.#names.length !== 0) {
      for (let i = 0; i < n; i++) {
        this.add(
          loaded.names[i] as string,
          firstOffset + i,
          loaded.dataSizes[i] as number,
          loaded.seeds[i] as number,
          fingerprints === null ? 0 : (fingerprints[i] as number),
          layouts === null ? undefined : layouts[i],
          0,
          true,
          false,
          -1,
          NO_ROW,
        );
      }
      return;
    }
    const names = new Array<string>(n);
    const offset = new Array<number>(n);
    const dataSize = new Array<number>(n);
    const seed = new Array<number>(n);
    const fingerprint = new Array<number>(n);
    const layout = new Array<PackingLayout | undefined>(n);
    const rows = this.#rows;
    for (let i = 0; i < n; i++) {
      const name = loaded.names[i] as string;
      names[i] = name;
      offset[i] = firstOffset + i;
      dataSize[i] = loaded.dataSizes[i] as number;
      seed[i] = loaded.seeds[i] as number;
      fingerprint[i] = fingerprints === null ? 0 : (fingerprints[i] as number);
      layout[i] = layouts === null ? undefined : layouts[i];
      rows.set(name, i);
    }
    this.#names = names;
    this.#offset = offset;
    this.#dataSize = dataSize;
    this.#seed = seed;
    this.#fingerprint = fingerprint;
    this.#layout = layout;
    this.#refCount = new Array<number>(n).fill(0);
    this.#flags = new Array<number>(n).fill(CURRENT | FROM_LOAD);
    this.#lastUsed = new Array<number>(n).fill(NO_TICK);
    this.#changes += n;
    // A name listed twice (an index written by hand, or an odd storage): the earlier rows
    // stop being current, as add's would.
    if (rows.size !== n)
      for (let i = 0; i < n; i++) if (rows.get(names[i] as string) !== i) this.#notCurrent(i);
  }

  /** A name added again without its old row given (a storage listing it twice): rare, so a scan. */
  #supersededBy(name: string, row: number): void {
    const names = this.#names;
    for (let i = 0; i < row; i++) if (names[i] === name) this.#notCurrent(i);
  }

  #notCurrent(row: number): void {
    this.#flags[row] = (this.#flags[row] as number) & ~CURRENT;
  }

  delete(name: string): void {
    const row = this.#rows.get(name);
    if (row === undefined) return;
    this.#rows.delete(name);
    this.#changes++;
    this.#notCurrent(row);
    // The row stays allocated (rows are never reused); drop what it references.
    this.#layout[row] = undefined;
  }

  offset(row: number): number {
    return this.#offset[row] as number;
  }

  dataSize(row: number): number {
    return this.#dataSize[row] as number;
  }

  seed(row: number): number {
    return this.#seed[row] as number;
  }

  fingerprint(row: number): number {
    return this.#fingerprint[row] as number;
  }

  layout(row: number): PackingLayout | undefined {
    return this.#layout[row];
  }

  refCount(row: number): number {
    return this.#refCount[row] as number;
  }

  setRefCount(row: number, refCount: number): void {
    this.#refCount[row] = refCount;
  }

  inCurrentRuntime(row: number): boolean {
    return ((this.#flags[row] as number) & IN_CURRENT_RUNTIME) !== 0;
  }

  setInCurrentRuntime(row: number, value: boolean): void {
    const flags = this.#flags[row] as number;
    this.#flags[row] = value ? flags | IN_CURRENT_RUNTIME : flags & ~IN_CURRENT_RUNTIME;
  }

  fromLoad(row: number): boolean {
    return ((this.#flags[row] as number) & FROM_LOAD) !== 0;
  }

  setFromLoad(row: number): void {
    this.#flags[row] = (this.#flags[row] as number) | FROM_LOAD;
  }

  /** Tick of the last look-up hit or insert, or undefined when there was none. */
  lastUsed(row: number): number | undefined {
    const tick = this.#lastUsed[row] as number;
    return tick === NO_TICK ? undefined : tick;
  }

  /** Marks the entry used by the build in progress at `tick`. */
  use(row: number, tick: number): void {
    this.#flags[row] = (this.#flags[row] as number) | IN_CURRENT_RUNTIME;
    this.#lastUsed[row] = tick;
  }

  /**
   * Whether the entry of `row` serves the key. A hit needs the same seed and fingerprint
   * (0 stored = unknown, as in v2 files, which have none), the same layout when both sides
   * have one (v2 entries have none: seed and size decide, unless another shape of the
   * key's has both too: AMBIGUOUS), and dataSize equal to the key's packedSize. Anything
   * else is a miss, never a read past an entry: XNNPACK's seed XORs shape numbers, so
   * [96, 32] and [112, 48] share one.
   */
  match(row: number, key: PackedShapeKey): Found {
    const fingerprint = this.#fingerprint[row] as number;
    if (this.#seed[row] !== key.seed || (fingerprint !== 0 && fingerprint !== key.fingerprint)) {
      return STALE_SEED;
    }
    if (key.packedSize !== undefined && this.#dataSize[row] !== key.packedSize) return STALE_LAYOUT;
    const layout = this.#layout[row];
    if (layout === undefined) return key.ambiguousWithoutLayout === true ? AMBIGUOUS : HIT;
    if (key.layout !== undefined && !layoutsEqual(layout, key.layout)) return STALE_LAYOUT;
    return HIT;
  }

  /** Calls `visit` for each named entry in insertion order (no pair allocated per entry). */
  forEach(visit: (row: number, name: string) => void): void {
    this.#rows.forEach(visit);
  }

  names(): string[] {
    return [...this.#rows.keys()];
  }

  /** A copy of the entry's fields as ExecuTorch's PackedDataMeta (plus ours). */
  meta(row: number): PackedDataMeta {
    const meta: PackedDataMeta = {
      offset: this.offset(row),
      dataSize: this.dataSize(row),
      refCount: this.refCount(row),
      inCurrentRuntime: this.inCurrentRuntime(row),
      fromLoad: this.fromLoad(row),
      seed: this.seed(row),
      fingerprint: this.fingerprint(row),
    };
    const layout = this.layout(row);
    if (layout !== undefined) meta.layout = layout;
    const lastUsed = this.lastUsed(row);
    if (lastUsed !== undefined) meta.lastUsed = lastUsed;
    return meta;
  }

  /**
   * Ends a build that succeeded: each entry it used gains a reference and leaves the
   * build. Returns their names (what the runtime now holds).
   */
  takeReferences(): string[] {
    const names: string[] = [];
    this.#rows.forEach((row, name) => {
      const flags = this.#flags[row] as number;
      if ((flags & IN_CURRENT_RUNTIME) === 0) return;
      this.#refCount[row] = (this.#refCount[row] as number) + 1;
      this.#flags[row] = flags & ~IN_CURRENT_RUNTIME;
      names.push(name);
    });
    return names;
  }

  /**
   * Ends a build that was abandoned: its entries leave the build without a reference.
   * Returns those no runtime holds and no file keeps (they can be freed).
   */
  leaveRuntime(): string[] {
    const unheld: string[] = [];
    this.#rows.forEach((row, name) => {
      if (!this.inCurrentRuntime(row)) return;
      this.setInCurrentRuntime(row, false);
      if (this.refCount(row) === 0 && !this.fromLoad(row)) unheld.push(name);
    });
    return unheld;
  }

  /**
   * Drops one reference per name (names must exist), never below 0: upstream decrements
   * an unsigned counter, which wraps. Returns the distinct names touched.
   */
  dropReferences(names: readonly string[]): Set<string> {
    const touched = new Set<string>();
    for (const name of names) {
      const row = this.rowOf(name);
      const refCount = this.refCount(row);
      if (refCount > 0) this.setRefCount(row, refCount - 1);
      touched.add(name);
    }
    return touched;
  }

  /** Every named entry as storage saves it, its bytes found by `regionAt(offset)`. */
  storedEntries(regionAt: (offset: number) => PackedRegion): StoredEntry[] {
    const entries: StoredEntry[] = [];
    this.#rows.forEach((row, name) => {
      const region = regionAt(this.offset(row));
      const seed = this.seed(row);
      const fingerprint = this.fingerprint(row);
      const dataSize = this.dataSize(row);
      const refCount = this.refCount(row);
      const layout = this.layout(row);
      const lastUsed = this.lastUsed(row) ?? 0;
      // Two literal shapes rather than a spread: this runs once per entry on every save.
      entries.push(
        layout === undefined
          ? { name, seed, fingerprint, dataSize, region, refCount, lastUsed }
          : { name, seed, fingerprint, dataSize, region, refCount, lastUsed, layout },
      );
    });
    return entries;
  }

  clear(): void {
    this.#rows.clear();
    this.#names = [];
    this.#hint = 0;
    this.#changes++;
    this.#offset = [];
    this.#dataSize = [];
    this.#refCount = [];
    this.#flags = [];
    this.#seed = [];
    this.#fingerprint = [];
    this.#layout = [];
    this.#lastUsed = [];
  }
}

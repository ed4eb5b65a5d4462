import type { NamedDataMap, TensorView } from '@memlayer/xnnpack-cache';
import { ModuleLoaderError } from '../errors.js';
import type { SafetensorsFile } from './file.js';
import type { SafetensorsTensorInfo } from './header.js';
import { OrderedKeys } from './ordered-keys.js';
import { MappedTensorView } from './tensor-view.js';

/**
 * The named data map of a program: the union of its safetensors files, by tensor name.
 * The files' tables are read from their headers on first use.
 * One map from name to slot (a number: tensors of file 0, then of file 1, …) serves every
 * look-up; a look-up of a tensor stored next to the previous one (a graph walked in file
 * order) is a string comparison or two, no map read.
 */
export class SafetensorsNamedDataMap implements NamedDataMap {
  #slots: Map<string, number> | null = null;
  /** Tensor name of each slot, and the slot of the last look-up. */
  #names: string[] = [];
  #lastSlot = -1;
  /** File index of each slot, and the first slot of each file. */
  #fileOfSlot: Uint32Array = new Uint32Array(0);
  #firstSlot: Uint32Array = new Uint32Array(0);

  constructor(readonly files: readonly SafetensorsFile[]) {}

  /** Reads every file's table (its header) and checks names are unique. Once. */
  resolve(): void {
    if (this.#slots !== null) return;
    let total = 0;
    for (const file of this.files) total += file.table.size;
    const slots = new Map<string, number>();
    const allNames: string[] = new Array(total);
    const fileOfSlot = new Uint32Array(total);
    const firstSlot = new Uint32Array(this.files.length);
    let slot = 0;
    for (let f = 0; f < this.files.length; f++) {
      const { names } = (this.files[f] as SafetensorsFile).table;
      firstSlot[f] = slot;
      fileOfSlot.fill(f, slot, slot + names.length);
      for (let i = 0; i < names.length; i++) {
        const name = names[i] as string;
        allNames[slot] = name;
        slots.set(name, slot++);
        // A name seen before leaves the map's size behind the slot count.
        if (slots.size !== slot) this.#duplicate(name, f);
      }
    }
    this.#slots = slots;
    this.#names = allNames;
    this.#fileOfSlot = fileOfSlot;
    this.#firstSlot = firstSlot;
  }

  get(name: string): MappedTensorView | undefined {
    const slot = this.slotOf(name);
    return slot < 0 ? undefined : this.#fileAt(slot).viewAt(this.#indexAt(slot));
  }

  info(name: string): SafetensorsTensorInfo | undefined {
    const slot = this.slotOf(name);
    return slot < 0 ? undefined : this.#fileAt(slot).table.info(this.#indexAt(slot));
  }

  names(): Iterable<string> {
    this.resolve();
    return (this.#slots as Map<string, number>).keys();
  }

  /** The content key of a tensor (hashes it unless this load hashed it already). */
  contentKey(name: string): string {
    return this.fileOf(name).contentKey(name);
  }

  /** The file holding a tensor (ERR_MANIFEST_INVALID when none does). */
  fileOf(name: string): SafetensorsFile {
    return this.#fileAt(this.requireSlot(name));
  }

  /** Unmaps what only this view held (called by the cache after each layer or at finalize). */
  release(view: TensorView): void {
    if (view instanceof MappedTensorView) view.owner.release(view);
  }

  close(): void {
    for (const file of this.files) file.close();
  }

  /** @internal The slot of a tensor, or -1. */
  slotOf(name: string): number {
    if (this.#slots === null) this.resolve();
    // A graph walked in file order asks for the tensor after the last one, or (a node's
    // tensors taken again: info, then content key) the last one or the one before it.
    const names = this.#names;
    const last = this.#lastSlot;
    for (let slot = last + 1; slot >= last - 1 && slot >= 0; slot--) {
      if (names[slot] === name) {
        this.#lastSlot = slot;
        return slot;
      }
    }
    const slot = (this.#slots as Map<string, number>).get(name) ?? -1;
    if (slot >= 0) this.#lastSlot = slot;
    return slot;
  }

  /**
   * @internal Where each slot's tensor is: the file index of each slot and the first slot of
   * each file (tensor `slot` is at `slot - firstSlot[file]` of `files[file].table`). For loops
   * over every tensor of a method: column reads instead of a call per tensor.
   */
  slotColumns(): { readonly fileOfSlot: Uint32Array; readonly firstSlot: Uint32Array } {
    if (this.#slots === null) this.resolve();
    return { fileOfSlot: this.#fileOfSlot, firstSlot: this.#firstSlot };
  }

  /** @internal The file holding a tensor and its index in that file's table, or undefined. */
  locate(name: string): { file: SafetensorsFile; index: number } | undefined {
    const slot = this.slotOf(name);
    return slot < 0 ? undefined : { file: this.#fileAt(slot), index: this.#indexAt(slot) };
  }

  /** @internal The slot of a tensor; ERR_MANIFEST_INVALID when no file holds it. */
  requireSlot(name: string): number {
    const slot = this.slotOf(name);
    if (slot < 0) {
      throw new ModuleLoaderError('ERR_MANIFEST_INVALID', `No tensor "${name}" in the weights`, {
        field: name,
      });
    }
    return slot;
  }

  #fileAt(slot: number): SafetensorsFile {
    return this.files[this.#fileOfSlot[slot] as number] as SafetensorsFile;
  }

  #indexAt(slot: number): number {
    return slot - (this.#firstSlot[this.#fileOfSlot[slot] as number] as number);
  }

  #duplicate(name: string, fileIndex: number): never {
    const file = this.files[fileIndex] as SafetensorsFile;
    const other = this.files.find(
      (candidate, f) => f < fileIndex && candidate.table.indexOf(name) >= 0,
    );
    throw new ModuleLoaderError(
      'ERR_SAFETENSORS_INVALID',
      `${file.path}: tensor "${name}" is also in ${(other ?? file).path}`,
      { file: file.path, field: name },
    );
  }
}

/**
 * What the XNNPACK backend hands the weights cache: tensors by content key (the SHA-256 of
 * their stored bytes), so an entry name (kernel key + bias key) says what was packed, not
 * what the tensors were called; tensors with equal bytes share one entry.
 *
 * The cache asks for the keys in the order they were added (one build walks the graph
 * twice, in the same order): keys and tensors (file, table index) are kept in that order and
 * a look-up of the next key is one comparison; a map by key is made only for a look-up out of
 * that order, or for names(). A view is made per get(), not kept: the cache holds it from
 * loadUnpackedData to the layer's release, so on a warm start it dies young instead of
 * surviving the build (views handed out are never reused, so identities never mix).
 */
export class ContentKeyedDataMap implements NamedDataMap {
  readonly #keys = new OrderedKeys();
  readonly #files: SafetensorsFile[] = [];
  readonly #indices: number[] = [];

  constructor(readonly source: SafetensorsNamedDataMap) {}

  /** Adds a tensor by name; returns its key (ERR_MANIFEST_INVALID when no file holds it). */
  add(name: string): string {
    const found = this.source.locate(name);
    if (found === undefined) this.source.requireSlot(name); // throws ERR_MANIFEST_INVALID
    const { file, index } = found as { file: SafetensorsFile; index: number };
    return this.addAt(file, index);
  }

  /** @internal Adds tensor `index` of `file` (a file of the source); returns its key. */
  addAt(file: SafetensorsFile, index: number): string {
    const key = file.contentKeyAt(index);
    this.#keys.add(key);
    this.#files.push(file);
    this.#indices.push(index);
    return key;
  }

  get(key: string): TensorView | undefined {
    const at = this.#keys.find(key);
    if (at < 0) return undefined;
    return (this.#files[at] as SafetensorsFile).freshViewAt(this.#indices[at] as number);
  }

  names(): Iterable<string> {
    return this.#keys.names();
  }

  release(view: TensorView): void {
    this.source.release(view);
  }
}

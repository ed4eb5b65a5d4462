import type { NamedDataMap, TensorView } from '@memlayer/xnnpack-cache';
import { ModuleLoaderError } from '../errors.js';
import type { SafetensorsFile } from './file.js';
import type { SafetensorsTensorInfo } from './header.js';
import { MappedTensorView } from './tensor-view.js';

/**
 * The named data map of a program: the union of its safetensors files, by tensor name.
 * The files' tables are read from their headers on first use. One map from name to slot (a
 * number: tensors of file 0, then of file 1, …) serves every look-up.
 */
export class SafetensorsNamedDataMap implements NamedDataMap {
  #slots: Map<string, number> | null = null;
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
    const fileOfSlot = new Uint32Array(total);
    const firstSlot = new Uint32Array(this.files.length);
    let slot = 0;
    for (let f = 0; f < this.files.length; f++) {
      const infos = (this.files[f] as SafetensorsFile).table.infos();
      firstSlot[f] = slot;
      fileOfSlot.fill(f, slot, slot + infos.length);
      for (const { name } of infos) {
        slots.set(name, slot++);
        // A name seen before leaves the map's size behind the slot count.
        if (slots.size !== slot) this.#duplicate(name, f);
      }
    }
    this.#slots = slots;
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
    return (this.#slots as Map<string, number>).get(name) ?? -1;
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
 * A view is made per get(), not kept: the cache holds it from loadUnpackedData to the
 * layer's release (views handed out are never reused, so identities never mix).
 */
export class ContentKeyedDataMap implements NamedDataMap {
  /** Where each key's tensor is: the first file and table index added under it. */
  readonly #tensors = new Map<string, { file: SafetensorsFile; index: number }>();

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
    if (!this.#tensors.has(key)) this.#tensors.set(key, { file, index });
    return key;
  }

  get(key: string): TensorView | undefined {
    const found = this.#tensors.get(key);
    return found?.file.freshViewAt(found.index);
  }

  names(): Iterable<string> {
    return this.#tensors.keys();
  }

  release(view: TensorView): void {
    this.source.release(view);
  }
}

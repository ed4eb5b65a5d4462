import type { NamedDataMap, TensorView } from '@memlayer/xnnpack-cache';
import { ModuleLoaderError } from '../errors.js';
import type { SafetensorsFile } from './file.js';
import type { SafetensorsTensorInfo } from './header.js';
import type { KnownFile, KnownFileSource } from './known-files.js';
import { MappedTensorView } from './tensor-view.js';

/**
 * The named data map of a program: the union of its safetensors files, by tensor name.
 * The files' tables are learnt on first use (from a record of known files, or headers).
 * One map from name to slot (a number: tensors of file 0, then of file 1, …) serves every
 * look-up; a look-up of the tensor stored right after the previous one (a graph walked in
 * file order) is one string comparison, no map read.
 */
export class SafetensorsNamedDataMap implements NamedDataMap {
  #slots: Map<string, number> | null = null;
  /** Tensor name of each slot, and the slot of the last look-up. */
  #names: string[] = [];
  #lastSlot = -1;
  /** File index of each slot, and the first slot of each file. */
  #fileOfSlot: Uint32Array = new Uint32Array(0);
  #firstSlot: Uint32Array = new Uint32Array(0);

  constructor(readonly files: readonly SafetensorsFile[]) {
    if (files.every((file) => file.isKnown)) this.resolve();
  }

  /**
   * Learns every file's table: from `source` when it knows the file's identity, else from
   * the process memo, else from the file's header. Then checks names are unique.
   */
  resolve(source?: KnownFileSource): void {
    for (const file of this.files) file.learn(source);
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

  /** The content key of a tensor (hashes it unless its digest is remembered). */
  contentKey(name: string): string {
    return this.fileOf(name).contentKey(name);
  }

  /** The file holding a tensor (ERR_MANIFEST_INVALID when none does). */
  fileOf(name: string): SafetensorsFile {
    return this.#fileAt(this.#requireSlot(name));
  }

  /** Unmaps what only this view held (called by the cache after each layer or at finalize). */
  release(view: TensorView): void {
    if (view instanceof MappedTensorView) view.owner.release(view);
  }

  /** What is known of each file whose table has been learnt. */
  knownFiles(): KnownFile[] {
    return this.files.filter((file) => file.isKnown).map((file) => file.describe());
  }

  close(): void {
    for (const file of this.files) file.close();
  }

  /** @internal The slot of a tensor, or -1. */
  slotOf(name: string): number {
    if (this.#slots === null) this.resolve();
    const next = this.#lastSlot + 1;
    if (this.#names[next] === name) {
      this.#lastSlot = next;
      return next;
    }
    const slot = (this.#slots as Map<string, number>).get(name) ?? -1;
    if (slot >= 0) this.#lastSlot = slot;
    return slot;
  }

  /**
   * @internal The content key and view of a tensor by name, in one look-up (the XNNPACK
   * backend's per-tensor step); ERR_MANIFEST_INVALID when no file holds it.
   */
  keyAndView(name: string, views: Map<string, MappedTensorView>): string {
    const slot = this.#requireSlot(name);
    const file = this.#fileAt(slot);
    const index = this.#indexAt(slot);
    const key = file.contentKeyAt(index);
    if (views.get(key) === undefined) views.set(key, file.viewAt(index) as MappedTensorView);
    return key;
  }

  #requireSlot(name: string): number {
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
 */
export class ContentKeyedDataMap implements NamedDataMap {
  readonly #views = new Map<string, MappedTensorView>();

  constructor(readonly source: SafetensorsNamedDataMap) {}

  /** Adds a tensor by name; returns its key. */
  add(name: string): string {
    return this.source.keyAndView(name, this.#views);
  }

  get(key: string): TensorView | undefined {
    return this.#views.get(key);
  }

  names(): Iterable<string> {
    return this.#views.keys();
  }

  release(view: TensorView): void {
    this.source.release(view);
  }
}

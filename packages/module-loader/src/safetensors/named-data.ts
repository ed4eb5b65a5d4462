import type { NamedDataMap, TensorView } from '@memlayer/xnnpack-cache';
import { ModuleLoaderError } from '../errors.js';
import type { SafetensorsFile } from './file.js';
import type { SafetensorsTensorInfo } from './header.js';
import type { KnownFile, KnownFileSource } from './known-files.js';
import { MappedTensorView } from './tensor-view.js';

/**
 * The named data map of a program: the union of its safetensors files, by tensor name.
 * The files' tables are learnt on first use (from a record of known files, or headers).
 */
export class SafetensorsNamedDataMap implements NamedDataMap {
  #owners: Map<string, SafetensorsFile> | null = null;

  constructor(readonly files: readonly SafetensorsFile[]) {
    if (files.every((file) => file.isKnown)) this.resolve();
  }

  /**
   * Learns every file's table: from `source` when it knows the file's identity, else from
   * the process memo, else from the file's header. Then checks names are unique.
   */
  resolve(source?: KnownFileSource): void {
    for (const file of this.files) file.learn(source);
    if (this.#owners !== null) return;
    const owners = new Map<string, SafetensorsFile>();
    for (const file of this.files) {
      for (const name of file.tensors.keys()) {
        const other = owners.get(name);
        if (other) {
          throw new ModuleLoaderError(
            'ERR_SAFETENSORS_INVALID',
            `${file.path}: tensor "${name}" is also in ${other.path}`,
            { file: file.path, field: name },
          );
        }
        owners.set(name, file);
      }
    }
    this.#owners = owners;
  }

  get(name: string): MappedTensorView | undefined {
    return this.#ownerOf(name)?.get(name);
  }

  info(name: string): SafetensorsTensorInfo | undefined {
    return this.#ownerOf(name)?.tensors.get(name);
  }

  names(): Iterable<string> {
    this.resolve();
    return (this.#owners as Map<string, SafetensorsFile>).keys();
  }

  /** The content key of a tensor (hashes it unless its digest is remembered). */
  contentKey(name: string): string {
    return this.fileOf(name).contentKey(name);
  }

  /** The file holding a tensor (ERR_MANIFEST_INVALID when none does). */
  fileOf(name: string): SafetensorsFile {
    const owner = this.#ownerOf(name);
    if (owner === undefined) {
      throw new ModuleLoaderError('ERR_MANIFEST_INVALID', `No tensor "${name}" in the weights`, {
        field: name,
      });
    }
    return owner;
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

  #ownerOf(name: string): SafetensorsFile | undefined {
    if (this.#owners === null) this.resolve();
    return this.#owners?.get(name);
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
    // One owner look-up for both the key and the view (once per tensor of a load).
    const owner = this.source.fileOf(name);
    const key = owner.contentKey(name);
    if (!this.#views.has(key)) this.#views.set(key, owner.get(name) as MappedTensorView);
    return key;
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

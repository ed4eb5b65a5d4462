// An ExecuTorch program: a mapped .pte and the .ptd files its constants may live in.
import { ModuleLoaderError } from '../errors.js';
import { type MappedBytes, mapFileBytes } from './mapped-bytes.js';
import { readPtdNamedData } from './ptd-file.js';
import { PteFile, type PteMethod } from './pte-file.js';

/** Where a named constant's bytes are: a view of the .pte or of one .ptd. */
export interface NamedBytes {
  readonly bytes: Uint8Array;
  readonly file: string;
}

export class PteProgram {
  readonly path: string;
  readonly dataFiles: readonly string[];
  readonly file: PteFile;
  readonly #maps: MappedBytes[];
  readonly #methods = new Map<string, PteMethod>();
  #named: Map<string, NamedBytes> | null = null;

  /** Maps `path` and each data file and checks their headers; on error nothing stays mapped. */
  constructor(path: string, dataFiles: readonly string[] = []) {
    this.path = path;
    this.dataFiles = [...dataFiles];
    this.#maps = [];
    try {
      const program = mapFileBytes(path, 'a .pte program');
      this.#maps.push(program);
      this.file = new PteFile(path, program.bytes);
      for (const data of this.dataFiles) this.#maps.push(mapFileBytes(data, 'a .ptd data file'));
    } catch (error) {
      this.close();
      throw error;
    }
  }

  methodNames(): string[] {
    return this.file.methodNames();
  }

  /** The method named `name` (read once), or undefined. */
  method(name: string): PteMethod | undefined {
    let method = this.#methods.get(name);
    if (method === undefined) {
      method = this.file.method(name);
      if (method !== undefined) this.#methods.set(name, method);
    }
    return method;
  }

  /**
   * The named data of the data files and of the program, by key (read on first use). As
   * ExecuTorch's merged map (extension/named_data_map/merged_data_map.h): the .ptd files
   * first, in the order given, then the program's own entries.
   */
  namedData(): ReadonlyMap<string, NamedBytes> {
    if (this.#named === null) {
      const named = new Map<string, NamedBytes>();
      const add = (key: string, bytes: Uint8Array, file: string) => {
        if (!named.has(key)) named.set(key, { bytes, file });
      };
      this.dataFiles.forEach((file, index) => {
        const bytes = (this.#maps[index + 1] as MappedBytes).bytes;
        for (const [key, data] of readPtdNamedData(file, bytes)) add(key, data, file);
      });
      for (const [key, bytes] of this.file.namedData()) add(key, bytes, this.path);
      this.#named = named;
    }
    return this.#named;
  }

  /** The bytes of a named constant; a key no file holds is a typed error. */
  namedBytes(key: string, method: string): NamedBytes {
    const found = this.namedData().get(key);
    if (found !== undefined) return found;
    if (this.dataFiles.length === 0 && this.namedData().size === 0) {
      throw new ModuleLoaderError(
        'ERR_DATA_FILE_REQUIRED',
        `${this.path}: method "${method}" keeps its constants in a .ptd data file; pass it as dataFiles (memlayer: --data)`,
        { file: this.path, field: method },
      );
    }
    throw new ModuleLoaderError(
      'ERR_NAMED_DATA_MISSING',
      `${this.path}: method "${method}" needs the constant "${key}", which neither the program nor ${this.dataFiles.length === 0 ? 'any data file' : this.dataFiles.join(', ')} holds`,
      { file: this.path, field: key },
    );
  }

  /** Unmaps every file. Views handed out before must not be read afterwards. */
  close(): void {
    for (const map of this.#maps.splice(0)) map.close();
  }
}

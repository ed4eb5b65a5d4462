// An ExecuTorch program: a .pte and the .ptd files its constants may live in, each mapped
// range by range as it is read.
import { ModuleLoaderError } from '../errors.js';
import { MappedRanges } from './mapped-bytes.js';
import { readPtdNamedData } from './ptd-file.js';
import { type FileRange, PteFile, type PteMethod } from './pte-file.js';

/** Where a named constant's bytes lie: a range of the .pte or of one .ptd. */
export interface NamedRange extends FileRange {
  readonly file: string;
}

export class PteProgram {
  readonly path: string;
  readonly dataFiles: readonly string[];
  readonly file: PteFile;
  /** The .pte's ranges, then each data file's. */
  readonly #files: MappedRanges[] = [];
  readonly #methods = new Map<string, PteMethod>();
  #named: Map<string, NamedRange & { readonly ranges: MappedRanges }> | null = null;

  /**
   * Opens `path` and each data file, reads the program's header and maps its flatbuffer;
   * on error nothing stays open.
   */
  constructor(path: string, dataFiles: readonly string[] = []) {
    this.path = path;
    this.dataFiles = [...dataFiles];
    try {
      const program = new MappedRanges(path, 'a .pte program');
      this.#files.push(program);
      this.file = new PteFile(path, program);
      for (const data of this.dataFiles)
        this.#files.push(new MappedRanges(data, 'a .ptd data file'));
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

  /** Whether any named data can be found at all (in the program or a data file). */
  hasNamedData(): boolean {
    return this.dataFiles.length > 0 || this.file.hasNamedData();
  }

  /**
   * Where each named constant lies, by key (the indexes are read on first use). As
   * ExecuTorch's merged map (extension/named_data_map/merged_data_map.h): the .ptd files
   * first, in the order given, then the program's own entries.
   */
  namedData(): ReadonlyMap<string, NamedRange> {
    return this.#index();
  }

  /** The bytes of a named constant (mapped now); a key no file holds is a typed error. */
  namedBytes(key: string, method: string): Uint8Array {
    const found = this.#index().get(key);
    if (found !== undefined) return found.ranges.windowRange(found.start, found.size);
    if (!this.hasNamedData()) this.#dataFileRequired(method);
    throw new ModuleLoaderError(
      'ERR_NAMED_DATA_MISSING',
      `${this.path}: method "${method}" needs the constant "${key}", which neither the program nor ${this.dataFiles.length === 0 ? 'any data file' : this.dataFiles.join(', ')} holds`,
      { file: this.path, field: key },
    );
  }

  /** Fails unless some named data is there: a method with named constants needs it. */
  requireNamedData(method: string): void {
    if (!this.hasNamedData()) this.#dataFileRequired(method);
  }

  #dataFileRequired(method: string): never {
    throw new ModuleLoaderError(
      'ERR_DATA_FILE_REQUIRED',
      `${this.path}: method "${method}" keeps its constants in a .ptd data file; pass it as dataFiles (memlayer: --data)`,
      { file: this.path, field: method },
    );
  }

  #index(): Map<string, NamedRange & { readonly ranges: MappedRanges }> {
    if (this.#named === null) {
      const named = new Map<string, NamedRange & { readonly ranges: MappedRanges }>();
      this.dataFiles.forEach((file, index) => {
        const ranges = this.#files[index + 1] as MappedRanges;
        for (const [key, range] of readPtdNamedData(file, ranges)) {
          if (!named.has(key)) named.set(key, { ...range, file, ranges });
        }
      });
      const program = this.#files[0] as MappedRanges;
      for (const [key, range] of this.file.namedData()) {
        if (!named.has(key)) named.set(key, { ...range, file: this.path, ranges: program });
      }
      this.#named = named;
    }
    return this.#named;
  }

  /** Unmaps and closes every file. Views handed out before must not be read afterwards. */
  close(): void {
    for (const file of this.#files.splice(0)) file.close();
  }
}

import type { MappedFile, Mapping } from '@memlayer/mmap-native';
import { mmapNative } from '#deferred/mmap-native';
import { ModuleLoaderError } from '../errors.js';
import { ioError } from '../safetensors/file-checks.js';

/** Typed arrays over one mapping stop at 2 GiB here; a larger range is refused. */
export const MAX_RANGE_BYTES = 2 ** 31 - 1;

/** A file's bytes by range: what the .pte and .ptd readers read through. */
export interface ByteRanges {
  readonly size: number;
  /** Bytes [start, start + length), read (not mapped): short at the end of the file. */
  read(start: number, length: number): Uint8Array;
  /** A view of bytes [start, start + length), which the caller checked lie in the file. */
  range(start: number, length: number): Uint8Array;
  /**
   * range(), for one of many small reads in a row (constants): a new mapping spans a window
   * that later reads may fall into.
   */
  windowRange(start: number, length: number): Uint8Array;
}

/**
 * A program or data file, mapped read-only range by range, when a range is first needed: a
 * warm start maps the program's flatbuffer and its delegate payloads, never the constants.
 * Constants are mapped in windows of NO_GC_WINDOW_BYTES (when the file has them): one
 * mapping serves many constants, and no window alone starts a garbage collection.
 */
export class MappedRanges implements ByteRanges {
  readonly path: string;
  readonly size: number;
  readonly #file: MappedFile;
  readonly #what: string;
  readonly #windows: { start: number; end: number; mapping: Mapping }[] = [];

  /** Opens the regular file at `path` (a FIFO, directory or device is refused). */
  constructor(path: string, what: string) {
    this.path = path;
    this.#what = what;
    try {
      this.#file = mmapNative().openMappedFile(path, { mode: 'r' });
    } catch (error) {
      throw fileError(path, what, error);
    }
    try {
      this.size = this.#file.stat().size;
    } catch (error) {
      this.#file.close();
      throw fileError(path, what, error);
    }
    if (this.size === 0) {
      this.#file.close();
      throw new ModuleLoaderError('ERR_PROGRAM_INVALID', `${path}: an empty ${what}`, {
        file: path,
      });
    }
  }

  /** Bytes [start, start + length), read (not mapped): for headers. Short at the file's end. */
  read(start: number, length: number): Uint8Array {
    try {
      return this.#file.read(start, Math.max(0, Math.min(length, this.size - start)));
    } catch (error) {
      throw fileError(this.path, this.#what, error);
    }
  }

  range(start: number, length: number): Uint8Array {
    return this.#map(start, length, start + length);
  }

  windowRange(start: number, length: number): Uint8Array {
    return this.#map(
      start,
      length,
      Math.min(this.size, Math.max(start + length, start + mmapNative().NO_GC_WINDOW_BYTES)),
    );
  }

  /** A view of [start, start + length) from a mapping already made, else one to `windowEnd`. */
  #map(start: number, length: number, windowEnd: number): Uint8Array {
    const end = start + length;
    for (const window of this.#windows) {
      if (start >= window.start && end <= window.end) {
        return new Uint8Array(window.mapping.buffer, start - window.start, length);
      }
    }
    if (length > MAX_RANGE_BYTES) {
      throw new ModuleLoaderError(
        'ERR_FILE_TOO_LARGE',
        `${this.path}: Expected at most ${MAX_RANGE_BYTES} bytes in one range of ${this.#what} but received ${length}`,
        { file: this.path },
      );
    }
    let mapping: Mapping;
    try {
      mapping = this.#file.map(start, Math.max(windowEnd - start, 1), { writable: false });
    } catch (error) {
      throw fileError(this.path, this.#what, error);
    }
    this.#windows.push({ start, end: windowEnd, mapping });
    return new Uint8Array(mapping.buffer, 0, length);
  }

  /** Unmaps every window and closes the file: views handed out read as empty afterwards. */
  close(): void {
    for (const window of this.#windows.splice(0)) window.mapping.close();
    this.#file.close();
  }
}

/** A FIFO, folder or device is ERR_NOT_A_REGULAR_FILE; anything else the ERR_PROGRAM_IO of any file. */
function fileError(path: string, what: string, error: unknown): ModuleLoaderError {
  if (error instanceof mmapNative().MmapError && error.code === 'ERR_MMAP_NOT_REGULAR_FILE') {
    return new ModuleLoaderError(
      'ERR_NOT_A_REGULAR_FILE',
      `${path}: Expected a regular file for ${what} but received another kind of file`,
      { file: path, cause: error },
    );
  }
  return ioError(path, `cannot read ${what}`, error);
}

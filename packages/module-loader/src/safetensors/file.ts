import { type MappedFile, type Mapping, MmapError, openMappedFile } from '@memlayer/mmap-native';
import type { NamedDataMap, TensorView } from '@memlayer/xnnpack-cache';
import { ModuleLoaderError } from '../errors.js';
import { bf16ToF32, f16ToF32 } from './convert.js';
import { FLOAT_DTYPES } from './dtypes.js';
import { parseSafetensorsHeader, type SafetensorsTensorInfo } from './header.js';

/**
 * A safetensors file mapped read-only with mmap-native. F32 tensors are zero-copy views
 * of the mapping; F16/BF16 are widened to f32 on first use. close() unmaps: views
 * handed out before then read as empty afterwards, never as freed memory.
 */
export class SafetensorsFile {
  readonly path: string;
  readonly tensors: ReadonlyMap<string, SafetensorsTensorInfo>;
  readonly metadata: Readonly<Record<string, string>>;
  private readonly file: MappedFile;
  private readonly mapping: Mapping;
  private readonly views = new Map<string, TensorView>();

  private constructor(path: string, file: MappedFile, mapping: Mapping) {
    this.path = path;
    this.file = file;
    this.mapping = mapping;
    const header = parseSafetensorsHeader(mapping.bytes(), mapping.length, path);
    this.tensors = new Map(header.tensors.map((tensor) => [tensor.name, tensor]));
    this.metadata = header.metadata;
  }

  static open(path: string): SafetensorsFile {
    let file: MappedFile | undefined;
    let mapping: Mapping | undefined;
    try {
      file = openMappedFile(path, { mode: 'r' });
      const size = file.size();
      if (size < 8) {
        throw new ModuleLoaderError(
          'ERR_SAFETENSORS_INVALID',
          `${path}: file is ${size} bytes; too short for safetensors`,
          {
            file: path,
          },
        );
      }
      mapping = file.map(0, size, { writable: false });
      return new SafetensorsFile(path, file, mapping);
    } catch (error) {
      mapping?.close();
      file?.close();
      if (error instanceof MmapError) {
        throw new ModuleLoaderError(
          'ERR_PROGRAM_IO',
          `${path}: cannot map weights (${error.code}: ${error.message})`,
          {
            file: path,
            cause: error,
          },
        );
      }
      throw error;
    }
  }

  /** The tensor as an f32 view (same object on every call), or undefined. */
  get(name: string): TensorView | undefined {
    const cached = this.views.get(name);
    if (cached) return cached;
    const info = this.tensors.get(name);
    if (!info || !FLOAT_DTYPES.has(info.dtype) || this.mapping.closed) return undefined;
    const view: TensorView = { name, dtype: 'f32', shape: info.shape, data: this.floatsOf(info) };
    this.views.set(name, view);
    return view;
  }

  /** Bytes of the mapping that back tensor data (for accounting). */
  get mappedBytes(): number {
    return this.mapping.length;
  }

  close(): void {
    this.views.clear();
    this.mapping.close();
    this.file.close();
  }

  private floatsOf(info: SafetensorsTensorInfo): Float32Array {
    const elements = info.byteLength / (info.dtype === 'F32' ? 4 : 2);
    if (info.dtype === 'F32') {
      // Zero-copy when the tensor is 4-byte aligned in the file (writers pad for this).
      if (info.fileOffset % 4 === 0)
        return new Float32Array(this.mapping.buffer, info.fileOffset, elements);
      return new Float32Array(
        this.mapping.buffer.slice(info.fileOffset, info.fileOffset + info.byteLength),
      );
    }
    const bytes = new Uint8Array(this.mapping.buffer, info.fileOffset, info.byteLength);
    return info.dtype === 'F16' ? f16ToF32(bytes) : bf16ToF32(bytes);
  }
}

/** The named data map of a program: the union of its safetensors files. */
export class SafetensorsNamedDataMap implements NamedDataMap {
  private readonly owners = new Map<string, SafetensorsFile>();

  constructor(readonly files: readonly SafetensorsFile[]) {
    for (const file of files) {
      for (const name of file.tensors.keys()) {
        const other = this.owners.get(name);
        if (other) {
          throw new ModuleLoaderError(
            'ERR_SAFETENSORS_INVALID',
            `${file.path}: tensor "${name}" is also in ${other.path}`,
            { file: file.path, field: name },
          );
        }
        this.owners.set(name, file);
      }
    }
  }

  get(name: string): TensorView | undefined {
    return this.owners.get(name)?.get(name);
  }

  names(): Iterable<string> {
    return this.owners.keys();
  }

  close(): void {
    for (const file of this.files) file.close();
  }
}

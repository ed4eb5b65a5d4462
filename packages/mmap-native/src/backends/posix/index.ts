// The posix backend: real mmap through the native addon.

import { markAsUntransferable } from 'node:worker_threads';
import type {
  Advice,
  Backend,
  BackendFile,
  BackendMapping,
  BackendOpenOptions,
  BackgroundWrite,
  FileStat,
  LockKind,
  OpenMode,
  Residency,
  SyncMode,
  WriteEnd,
} from '../../backend.js';
import { MmapError } from '../../errors.js';
import { checkMapBudget, explainMapFailure } from '../../map-count.js';
import { maxBufferLength } from '../../node-builtins.js';
import type { FileOffset } from '../../validate.js';
import type { NativeAddon, NativeFile, NativeMapping } from './addon.js';

// Enumerations shared with src/native/posix/sys.h.
const OPEN_MODE: Record<OpenMode, number> = { r: 0, 'r+': 1, 'w+': 2, 'wx+': 3 };
const LOCK: Record<LockKind | 'unlock', number> = { unlock: 0, shared: 1, exclusive: 2 };
const SYNC: Record<SyncMode, number> = { sync: 0, async: 1, invalidate: 2 };
const ADVICE: Record<Advice, number> = {
  normal: 0,
  sequential: 1,
  random: 2,
  willneed: 3,
  dontneed: 4,
};

function toSize(value: number | bigint, path: string): number {
  if (typeof value === 'number') return value;
  throw new MmapError(`file size ${value} is beyond 2^53-1 bytes`, {
    code: 'ERR_MMAP_SIZE_UNSAFE',
    syscall: 'fstat',
    path,
  });
}

class PosixMapping implements BackendMapping {
  readonly buffer: ArrayBuffer;
  readonly address: bigint | null;

  constructor(private readonly native: NativeMapping) {
    this.buffer = native.buffer;
    this.address = native.address;
    // A transferred buffer would outlive unmap(); refuse postMessage/structuredClone
    // transfers up front (the native side also copes if one happens anyway).
    markAsUntransferable(this.buffer);
  }

  sync(offset: number, length: number, mode: SyncMode): void {
    this.native.sync(offset, length, SYNC[mode]);
  }

  advise(offset: number, length: number, advice: Advice): void {
    this.native.advise(offset, length, ADVICE[advice]);
  }

  residency(offset: number, length: number, pages: boolean): Residency {
    return this.native.residency(offset, length, pages);
  }

  unmap(): void {
    this.native.unmap();
  }
}

class PosixFile implements BackendFile {
  private readonly native: NativeFile;

  constructor(
    addon: NativeAddon,
    private readonly path: string,
    mode: OpenMode,
    permissions: number,
    followSymlinks: boolean,
    private readonly liveMappings: () => number,
  ) {
    this.native = new addon.File(path, OPEN_MODE[mode], permissions, followSymlinks);
  }

  size(): number {
    return toSize(this.native.size(), this.path);
  }

  grow(newSize: FileOffset, sparse: boolean): number {
    return toSize(this.native.grow(newSize, sparse), this.path);
  }

  truncate(newSize: FileOffset): number {
    return toSize(this.native.truncate(newSize), this.path);
  }

  map(offset: FileOffset, length: number, writable: boolean): BackendMapping {
    checkMapBudget(this.liveMappings(), this.path);
    try {
      return new PosixMapping(this.native.map(offset, length, writable, maxBufferLength()));
    } catch (error) {
      throw explainMapFailure(error, this.liveMappings());
    }
  }

  sync(dataOnly: boolean): void {
    this.native.sync(dataOnly);
  }

  syncAsync(dataOnly: boolean): Promise<void> {
    return this.native.syncAsync(dataOnly);
  }

  lock(kind: LockKind | 'unlock', wait: boolean): void {
    this.native.lock(LOCK[kind], wait);
  }

  stat(): FileStat {
    const st = this.native.stat();
    return {
      dev: Number(st.dev),
      ino: Number(st.ino),
      size: toSize(st.size, this.path),
      mode: st.mode,
      uid: st.uid,
      gid: st.gid,
      mtimeNs: st.mtimeNs,
    };
  }

  readInto(target: Uint8Array, position: FileOffset): number {
    return this.native.readInto(target, position);
  }

  write(source: Uint8Array, position: FileOffset): void {
    this.native.write(source, position);
  }

  writeInBackground(
    sources: readonly Uint8Array[],
    positions: readonly FileOffset[],
    syncBefore: readonly boolean[],
    end: Required<WriteEnd>,
  ): BackgroundWrite {
    return this.native.writeInBackground(
      sources,
      positions,
      syncBefore,
      end.syncAfter,
      end.releaseLock,
      end.startWriteback,
    );
  }

  close(): void {
    this.native.close();
  }
}

export function createPosixBackend(addon: NativeAddon): Backend {
  return {
    name: 'posix',
    maxMappingLength: maxBufferLength(),
    pageSize: () => addon.pageSize(),
    open: (path, mode, permissions, options?: BackendOpenOptions) =>
      new PosixFile(
        addon,
        path,
        mode,
        permissions,
        options?.followSymlinks ?? true,
        addon.liveMappings,
      ),
    liveMappings: () => addon.liveMappings(),
  };
}

export const LOCK_CODES = LOCK;

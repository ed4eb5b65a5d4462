// One safetensors weight file: its identity, header, tensor table, windowed mappings,
// lazily hashed content keys and lazily made views, which all follow the file's one life
// cycle (stat'ed, its header read, then mapped on demand). The header parser, digests and
// checks live in sibling files.
import type { BigIntStats } from 'node:fs';
import { alignUp } from '@memlayer/internal';
import type { MappedFile, Mapping } from '@memlayer/mmap-native';
import { mmapNative } from '#deferred/mmap-native';
import { ModuleLoaderError } from '../errors.js';
import { bf16ToF32, f16ToF32 } from './convert.js';
import { contentKey, nodeCrypto } from './digest.js';
import { FLOAT_DTYPES } from './dtypes.js';
import { changed, ioError } from './file-checks.js';
import { parseSafetensorsHeader, type SafetensorsTensorInfo } from './header.js';
import { type FileIdentity, statIdentity } from './identity.js';
import { MAX_HEADER_BYTES } from './limits.js';
import { TensorTable } from './tensor-table.js';
import { MappedTensorView } from './tensor-view.js';
import { WeightCounters } from './weight-stats.js';
import { MAX_WINDOW_BYTES, planWindows, type WindowPlan } from './windows.js';

/** 8-byte length + "{}": nothing shorter can be a safetensors file (checked from stat alone). */
const MIN_FILE_BYTES = 10;

/** Released weight pages leave the process in batches of at least this many bytes. */
const DROP_BATCH_BYTES = 1024 * 1024;

interface Window extends WindowPlan {
  mapping: Mapping | null;
  /** File offset up to which released tensors' pages were dropped (see #dropPages). */
  droppedTo: number;
  unmapPending: boolean;
  /** Views whose data currently points into this window. */
  readonly holders: Set<MappedTensorView>;
}

/**
 * A safetensors file of a program. Created from a stat alone: its header is read on first
 * need, and its tensors are hashed when first keyed, by every load (nothing about the file
 * is remembered across loads: a stat cannot tell a rewritten file from the old one). Tensor
 * data is mapped read-only in windows of at most 1 GiB, on first use. close() unmaps: views
 * handed out before read as empty afterwards, never as freed memory.
 */
export class SafetensorsFile {
  readonly path: string;
  readonly identity: FileIdentity;
  readonly counters: WeightCounters;
  #table: TensorTable | null = null;
  #metadata: Readonly<Record<string, string>> | null = null;
  /** The by-name map of `tensors`, made only for callers of that getter. */
  #tensors: Map<string, SafetensorsTensorInfo> | null = null;
  #file: MappedFile | null = null;
  #windows: Window[] | null = null;
  #windowOf: Map<string, number> | null = null;
  /** The view of each tensor handed out, by table index. */
  #views: (MappedTensorView | undefined)[] = [];
  #hashed = false;
  #closed = false;

  private constructor(path: string, identity: FileIdentity, counters: WeightCounters) {
    this.path = path;
    this.identity = identity;
    this.counters = counters;
  }

  /** Opens and reads the header now (the eager form; programs use SafetensorsFile.at). */
  static open(path: string, counters = new WeightCounters()): SafetensorsFile {
    const file = SafetensorsFile.at(path, counters, { file: path, field: path });
    try {
      file.#readHeader();
    } catch (error) {
      file.close();
      throw error;
    }
    return file;
  }

  /** One stat, no open: the file's identity. A file too short to be safetensors is refused here. */
  static at(
    path: string,
    counters: WeightCounters,
    ctx: { file: string; field: string },
    { stat }: { stat?: BigIntStats | undefined } = {},
  ): SafetensorsFile {
    const identity = statIdentity(path, ctx, stat);
    counters.add('filesStatted');
    if (identity.size < MIN_FILE_BYTES) {
      throw new ModuleLoaderError(
        'ERR_SAFETENSORS_INVALID',
        `${path}: file is ${identity.size} bytes; too short for safetensors`,
        { file: path },
      );
    }
    return new SafetensorsFile(path, identity, counters);
  }

  get tensors(): ReadonlyMap<string, SafetensorsTensorInfo> {
    if (this.#tensors === null) {
      const tensors = new Map<string, SafetensorsTensorInfo>();
      for (const tensor of this.table.infos()) tensors.set(tensor.name, tensor);
      this.#tensors = tensors;
    }
    return this.#tensors;
  }

  /** The tensor table in columns (reads the header on first use). */
  get table(): TensorTable {
    return this.#table ?? this.#readHeader();
  }

  /** The header's __metadata__ (reads the header on first use). */
  get metadata(): Readonly<Record<string, string>> {
    if (this.#metadata === null) this.#readHeader();
    return this.#metadata as Readonly<Record<string, string>>;
  }

  /** The tensor as an f32 view (same object on every call), or undefined. No I/O. */
  get(name: string): MappedTensorView | undefined {
    const index = this.table.indexOf(name);
    return index < 0 ? undefined : this.viewAt(index);
  }

  /** The view of the tensor at `index` of `table` (same object on every call), or undefined. */
  viewAt(index: number): MappedTensorView | undefined {
    const cached = this.#views[index];
    if (cached !== undefined) return cached;
    const view = this.freshViewAt(index);
    if (view !== undefined) this.#views[index] = view;
    return view;
  }

  /**
   * A new view of the tensor at `index`, kept by nobody here (a caller that holds views for
   * a short time), or undefined when it is not a float tensor or the file is closed.
   */
  freshViewAt(index: number): MappedTensorView | undefined {
    const info = this.table.info(index);
    if (!FLOAT_DTYPES.has(info.dtype) || this.#closed) return undefined;
    return new MappedTensorView(info.name, info, this, index);
  }

  /** The name the weights cache knows this tensor by: its digest (+ dtype when widened). */
  contentKey(name: string): string {
    const index = this.table.indexOf(name);
    if (index < 0) {
      throw new ModuleLoaderError('ERR_SAFETENSORS_INVALID', `${this.path}: no tensor "${name}"`, {
        file: this.path,
        field: name,
      });
    }
    return this.contentKeyAt(index);
  }

  /** contentKey of the tensor at `index` of `table`. */
  contentKeyAt(index: number): string {
    const table = this.table;
    const info = table.info(index);
    return contentKey(table.digest(index) ?? this.#hash(info, index), info.dtype);
  }

  /** SHA-256 of the tensor's stored bytes: hashed already by this load, or read (in ≤ 1 GiB maps) and hashed. */
  digest(info: SafetensorsTensorInfo): string {
    const index = this.table.indexOf(info.name);
    return (index < 0 ? undefined : this.table.digest(index)) ?? this.#hash(info, index);
  }

  /** Hashes a tensor and keeps its digest at `index` of the table for this load (-1: not in it). */
  #hash(info: SafetensorsTensorInfo, index: number): string {
    let hex: string;
    if (info.byteLength > 0 && info.byteLength <= MAX_WINDOW_BYTES) {
      // Through the tensor's window, kept mapped for the packing that usually follows; one
      // pass over the mapped bytes, no copy (crypto.hash: no Hash object per tensor).
      this.#openFile();
      const window = this.#mapWindow(info.name);
      if (window.holders.size === 0) this.#unmapLater(window);
      const mapping = window.mapping as Mapping;
      const bytes = new Uint8Array(mapping.buffer, info.fileOffset - window.start, info.byteLength);
      hex = nodeCrypto().hash('sha256', bytes, 'hex');
    } else {
      // Tensors over a window's size are hashed through several short-lived mappings.
      const sha = nodeCrypto().createHash('sha256');
      for (let at = 0; at < info.byteLength; at += MAX_WINDOW_BYTES) {
        const length = Math.min(MAX_WINDOW_BYTES, info.byteLength - at);
        this.#withBytes(info.fileOffset + at, length, (bytes) => sha.update(bytes));
      }
      hex = sha.digest('hex');
    }
    this.counters.add('tensorsHashed');
    this.counters.add('bytesHashed', info.byteLength);
    if (!this.#hashed) {
      this.#hashed = true;
      this.counters.add('filesHashed');
    }
    if (index >= 0) this.table.setDigest(index, hex);
    return hex;
  }

  /** @internal The floats behind a view; opens and maps on first use. */
  floatsOf(view: MappedTensorView): Float32Array {
    const { byteLength, dtype, fileOffset } = this.table.info(view.index);
    if (this.#closed || byteLength === 0) return new Float32Array(0);
    this.#openFile();
    const elements = byteLength / (dtype === 'F32' ? 4 : 2);
    if (dtype === 'F32' && fileOffset % 4 === 0) {
      const window = this.#mapWindow(view.name);
      window.holders.add(view);
      const mapping = window.mapping as Mapping;
      return new Float32Array(mapping.buffer, fileOffset - window.start, elements);
    }
    // Unaligned f32 and widened dtypes become heap copies.
    const bytes = this.#withBytes(fileOffset, byteLength, (b) => b.slice());
    if (dtype === 'F32') return new Float32Array(bytes.buffer);
    return dtype === 'F16' ? f16ToF32(bytes) : bf16ToF32(bytes);
  }

  /** @internal A view's data is no longer needed: unmap its window when no view holds it. */
  release(view: MappedTensorView): void {
    view.drop();
    const index = this.#windowOf?.get(view.name);
    const window = index === undefined ? undefined : this.#windows?.[index];
    if (window === undefined || !window.holders.delete(view)) return;
    this.#dropPages(window, view.index);
    if (window.holders.size === 0) this.#unmapLater(window);
  }

  /**
   * Takes the pages of released tensors out of this process (madvise DONTNEED; they stay in
   * the page cache, and a later read maps them again). A load packs every layer in one
   * synchronous pass, so its windows are unmapped only after the last layer: without this,
   * every weight byte it read would stay resident until then. Pages go in batches of at
   * least DROP_BATCH_BYTES, from where the last batch ended up to the released tensor's end
   * (layers are packed in file order; a tensor dropped before it is read is read again).
   */
  #dropPages(window: Window, index: number): void {
    const mapping = window.mapping;
    // A heap-backend "mapping" (no addon) is a copy in memory: re-reading it would only cost.
    if (mapping === null || mapping.backend === 'heap') return;
    const { fileOffset, byteLength } = this.table.info(index);
    const end = fileOffset + byteLength;
    if (end - window.droppedTo < DROP_BATCH_BYTES) return;
    // Whole pages of the file (a window starts on a 4 KiB boundary, which may not be a page
    // boundary): a page the next tensor shares is kept.
    const page = mmapNative().pageSize();
    const from = alignUp(window.droppedTo, page);
    const to = Math.floor(end / page) * page;
    window.droppedTo = end;
    if (to <= from) return;
    try {
      mapping.advise('dontneed', from - window.start, to - from);
    } catch {
      // Advice only: the pages then stay until the window is unmapped.
    }
  }

  /**
   * Unmaps a window once the current synchronous work is over, unless a view took it again:
   * a build releases each layer's view right after packing it, and the next layer's tensor
   * is usually in the same window (mapping it again per layer costs a map and GC pressure).
   */
  #unmapLater(window: Window): void {
    if (window.unmapPending) return;
    window.unmapPending = true;
    setImmediate(() => {
      window.unmapPending = false;
      if (window.holders.size > 0 || window.mapping === null) return;
      window.mapping.close();
      window.mapping = null;
    }).unref();
  }

  /** Bytes of the windows mapped right now. */
  get mappedBytes(): number {
    let total = 0;
    for (const window of this.#windows ?? []) if (window.mapping) total += window.length;
    return total;
  }

  close(): void {
    this.#closed = true;
    for (const window of this.#windows ?? []) {
      window.mapping?.close();
      window.mapping = null;
      window.holders.clear();
    }
    for (const view of this.#views) view?.drop();
    this.#views = [];
    this.#file?.close();
    this.#file = null;
  }

  /**
   * Opens the file (once) and checks it is still the file that was stat'ed at program load:
   * one replaced or rewritten since is refused rather than read as if the program had it.
   */
  #openFile(): MappedFile {
    if (this.#closed) {
      throw new ModuleLoaderError('ERR_PROGRAM_IO', `${this.path}: the weights were closed`, {
        file: this.path,
      });
    }
    if (this.#file !== null) return this.#file;
    let file: MappedFile;
    try {
      file = mmapNative().openMappedFile(this.path, { mode: 'r' });
    } catch (error) {
      throw ioError(this.path, 'cannot open weights', error);
    }
    this.counters.add('filesOpened');
    try {
      const stat = file.stat();
      const id = this.identity;
      if (
        BigInt(stat.dev) !== id.dev ||
        BigInt(stat.ino) !== id.ino ||
        stat.size !== id.size ||
        stat.mtimeNs !== id.mtimeNs
      ) {
        throw changed(this.path, 'it was modified or replaced after the program was loaded');
      }
      this.#file = file;
    } catch (error) {
      this.#file = null;
      file.close();
      throw error instanceof mmapNative().MmapError
        ? ioError(this.path, 'cannot read weights', error)
        : error;
    }
    return file;
  }

  /** Reads and validates the header (once): the tensor table and metadata. */
  #readHeader(): TensorTable {
    if (this.#table !== null) return this.#table;
    const file = this.#openFile();
    const size = this.identity.size;
    const lengthPrefix = file.read(0, 8);
    const headerLength =
      lengthPrefix.byteLength === 8
        ? new DataView(lengthPrefix.buffer, lengthPrefix.byteOffset, 8).getBigUint64(0, true)
        : 0n;
    const prefix =
      headerLength <= BigInt(MAX_HEADER_BYTES) && 8n + headerLength <= BigInt(size)
        ? file.read(0, 8 + Number(headerLength))
        : lengthPrefix;
    const header = parseSafetensorsHeader(prefix, size, this.path);
    this.counters.add('headersParsed');
    this.#metadata = header.metadata;
    this.#table = new TensorTable(header.tensors);
    return this.#table;
  }

  #mapWindow(name: string): Window {
    if (this.#windows === null) {
      const plan = planWindows(this.table.infos());
      this.#windows = plan.windows.map((w) => ({
        ...w,
        mapping: null,
        droppedTo: w.start,
        unmapPending: false,
        holders: new Set(),
      }));
      this.#windowOf = plan.windowOf;
    }
    const window = this.#windows[this.#windowOf?.get(name) ?? -1];
    if (window === undefined) throw new Error(`no window for tensor ${name}`);
    if (window.mapping === null) {
      window.mapping = this.#map(window.start, window.length);
      window.droppedTo = window.start;
    }
    return window;
  }

  #map(start: number, length: number): Mapping {
    try {
      const mapping = (this.#file as MappedFile).map(start, length, { writable: false });
      this.counters.add('windowsMapped');
      this.counters.add('bytesMapped', length);
      return mapping;
    } catch (error) {
      throw ioError(this.path, `cannot map ${length} bytes at ${start}`, error);
    }
  }

  /**
   * Runs `use` on the bytes of a range: inside a window mapped already, or through a
   * mapping of its own that is closed right after (hashing leaves nothing mapped).
   */
  #withBytes<T>(start: number, length: number, use: (bytes: Uint8Array) => T): T {
    if (length === 0) return use(new Uint8Array(0));
    this.#openFile();
    for (const window of this.#windows ?? []) {
      if (
        window.mapping &&
        start >= window.start &&
        start + length <= window.start + window.length
      ) {
        return use(new Uint8Array(window.mapping.buffer, start - window.start, length));
      }
    }
    const mapping = this.#map(start, length);
    try {
      return use(new Uint8Array(mapping.buffer, 0, length));
    } finally {
      mapping.close();
    }
  }
}

import {
  type ArgDirection,
  alignUp,
  CALLABLE_ALIGN,
  MAX_CHILDREN,
  NAME_FIELD_SIZE,
  NAME_MAX_BYTES,
} from './constants.js';
import {
  type CoreCallableSpec,
  checkSignature,
  coreCallableImageSize,
  isArgDirection,
  readCoreCallable,
  validateCoreCallableSpec,
  writeCoreCallable,
} from './core-callable.js';
import { DeviceRunnerError, invalidArgument } from './errors.js';
import { type ChipCallableLayout, chipCallableLayout } from './layout.js';

export interface ChipChildSpec {
  /** Index into the AICore dispatch table; the runner requires [0, 1024). */
  readonly funcId: number;
  readonly core: CoreCallableSpec;
}

export interface ChipCallableSpec {
  readonly signature?: readonly ArgDirection[];
  /** The orchestration shared object run on the AICPU (or on the host). */
  readonly orch: Uint8Array;
  /** Entry symbol; empty means the runtime default `aicpu_orchestration_entry`. */
  readonly funcName?: string;
  readonly configName?: string;
  readonly children?: readonly ChipChildSpec[];
}

export interface LayoutOptions {
  /** CHIP_MAX_TENSOR_ARGS: 256 (default) or 128 for older releases. */
  readonly maxTensorArgs?: number;
}

export interface ChipChildView {
  readonly funcId: number;
  /** child_offsets[i]: offset inside storage. */
  readonly storageOffset: number;
  /** Offset of the CoreCallable from the start of the ChipCallable. */
  readonly imageOffset: number;
  readonly imageSize: number;
  readonly signature: ArgDirection[];
  readonly binarySize: number;
  readonly resolvedAddr: bigint;
}

export interface ChipCallableView {
  readonly layout: ChipCallableLayout;
  readonly headerSize: number;
  readonly totalSize: number;
  readonly signature: ArgDirection[];
  readonly binarySize: number;
  readonly funcName: string;
  readonly configName: string;
  readonly children: readonly ChipChildView[];
  /** The orch .so bytes (a view into the parsed buffer, not a copy). */
  readonly orch: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: false });

function encodeName(name: string, what: string): Uint8Array {
  if (typeof name !== 'string') invalidArgument('a string', what, name);
  // A NUL would end the C string early and disagree with the length field: the parser
  // (and the AICPU's strlen) would see another name.
  if (name.includes('\0')) {
    throw new DeviceRunnerError(
      'ERR_NAME_CONTAINS_NUL',
      `Expected a name without NUL bytes for ${what} but received ${JSON.stringify(name.slice(0, 40))}`,
    );
  }
  // Names are char[64] in the ChipCallable header: at most 63 bytes, then the NUL.
  return encoder.encode(name).subarray(0, NAME_MAX_BYTES);
}

/** Builds the byte-exact ChipCallable image (layout in the README). Unwritten bytes are zero. */
export function buildChipCallable(spec: ChipCallableSpec, options: LayoutOptions = {}): Uint8Array {
  const layout = chipCallableLayout(options.maxTensorArgs);
  if (spec === null || typeof spec !== 'object') invalidArgument('an object', 'spec', spec);
  if (!(spec.orch instanceof Uint8Array)) invalidArgument('a Uint8Array', 'spec.orch', spec.orch);
  const signature = spec.signature ?? [];
  checkSignature(signature, layout.maxTensorArgs, 'spec.signature');
  const children = spec.children ?? [];
  if (!Array.isArray(children)) invalidArgument('an array', 'spec.children', children);
  if (children.length > MAX_CHILDREN) {
    throw new DeviceRunnerError(
      'ERR_CHILD_COUNT_OUT_OF_RANGE',
      `Expected at most ${MAX_CHILDREN} children for spec.children but received ${children.length}`,
    );
  }
  const funcName = encodeName(spec.funcName ?? '', 'spec.funcName');
  const configName = encodeName(spec.configName ?? '', 'spec.configName');

  // Storage: orch at 0, then each child image at a 64-aligned cursor.
  let cursor = spec.orch.length;
  const offsets: number[] = [];
  children.forEach((child, i) => {
    if (child === null || typeof child !== 'object') {
      invalidArgument('an object', `spec.children[${i}]`, child);
    }
    if (
      !Number.isInteger(child.funcId) ||
      child.funcId < -0x80000000 ||
      child.funcId > 0x7fffffff
    ) {
      invalidArgument('an i32', `spec.children[${i}].funcId`, child.funcId);
    }
    validateCoreCallableSpec(child.core, `spec.children[${i}].core`);
    cursor = alignUp(cursor, CALLABLE_ALIGN);
    offsets.push(cursor);
    cursor += coreCallableImageSize(child.core.binary.length);
  });
  if (cursor > 0xffffffff) {
    invalidArgument('storage of at most 4 GiB', 'spec', `${cursor} bytes`);
  }

  const image = new Uint8Array(layout.headerSize + cursor);
  const view = new DataView(image.buffer);
  signature.forEach((direction, i) => {
    view.setInt32(layout.signature + 4 * i, direction, true);
  });
  view.setInt32(layout.sigCount, signature.length, true);
  view.setUint32(layout.binarySize, spec.orch.length, true);
  image.set(funcName, layout.funcName);
  view.setUint32(layout.funcNameLen, funcName.length, true);
  children.forEach((child, i) => {
    view.setInt32(layout.childFuncIds + 4 * i, child.funcId, true);
    view.setUint32(layout.childOffsets + 4 * i, offsets[i] as number, true);
  });
  view.setInt32(layout.childCount, children.length, true);
  image.set(configName, layout.configName);
  view.setUint32(layout.configNameLen, configName.length, true);
  image.set(spec.orch, layout.headerSize);
  children.forEach((child, i) => {
    writeCoreCallable(view, layout.headerSize + (offsets[i] as number), child.core);
  });
  return image;
}

function readName(
  bytes: Uint8Array,
  view: DataView,
  offset: number,
  lenOffset: number,
  what: string,
): string {
  const field = bytes.subarray(offset, offset + NAME_FIELD_SIZE);
  const nul = field.indexOf(0);
  if (nul < 0) {
    throw new DeviceRunnerError('ERR_NAME_NOT_TERMINATED', `${what} has no NUL within 64 bytes`);
  }
  const declared = view.getUint32(lenOffset, true);
  if (declared !== nul) {
    throw new DeviceRunnerError(
      'ERR_NAME_LENGTH_MISMATCH',
      `${what} is ${nul} bytes long but its length field says ${declared}`,
    );
  }
  return decoder.decode(field.subarray(0, nul));
}

/**
 * Parses and validates untrusted ChipCallable bytes. Upstream trusts what it is handed;
 * we reject bad counts, unterminated names, an orch or child running past the buffer,
 * children overlapping the orch or each other, and trailing or missing bytes.
 */
export function parseChipCallable(
  bytes: Uint8Array,
  options: LayoutOptions = {},
): ChipCallableView {
  if (!(bytes instanceof Uint8Array)) invalidArgument('a Uint8Array', 'callable bytes', bytes);
  const layout = chipCallableLayout(options.maxTensorArgs);
  if (bytes.length < layout.headerSize) {
    throw new DeviceRunnerError(
      'ERR_BUFFER_TOO_SMALL',
      `ChipCallable needs at least ${layout.headerSize} header bytes but received ${bytes.length}`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

  const sigCount = view.getInt32(layout.sigCount, true);
  if (sigCount < 0 || sigCount > layout.maxTensorArgs) {
    throw new DeviceRunnerError(
      'ERR_SIG_COUNT_OUT_OF_RANGE',
      `sig_count ${sigCount} is outside [0, ${layout.maxTensorArgs}]`,
    );
  }
  const signature: ArgDirection[] = [];
  for (let i = 0; i < sigCount; i++) {
    const direction = view.getInt32(layout.signature + 4 * i, true);
    if (!isArgDirection(direction)) {
      throw new DeviceRunnerError('ERR_BAD_SIGNATURE', `argument ${i} has direction ${direction}`);
    }
    signature.push(direction);
  }

  const funcName = readName(bytes, view, layout.funcName, layout.funcNameLen, 'func_name');
  const configName = readName(bytes, view, layout.configName, layout.configNameLen, 'config_name');

  const storageSize = bytes.length - layout.headerSize;
  const binarySize = view.getUint32(layout.binarySize, true);
  if (binarySize > storageSize) {
    throw new DeviceRunnerError(
      'ERR_ORCH_OUT_OF_RANGE',
      `binary_size ${binarySize} exceeds the ${storageSize} storage bytes present`,
    );
  }

  const childCount = view.getInt32(layout.childCount, true);
  if (childCount < 0 || childCount > MAX_CHILDREN) {
    throw new DeviceRunnerError(
      'ERR_CHILD_COUNT_OUT_OF_RANGE',
      `child_count ${childCount} is outside [0, ${MAX_CHILDREN}]`,
    );
  }

  const children: ChipChildView[] = [];
  let storageEnd = binarySize;
  for (let i = 0; i < childCount; i++) {
    const storageOffset = view.getUint32(layout.childOffsets + 4 * i, true);
    if (storageOffset % CALLABLE_ALIGN !== 0) {
      throw new DeviceRunnerError(
        'ERR_CHILD_MISALIGNED',
        `child ${i} offset ${storageOffset} is not a multiple of ${CALLABLE_ALIGN}`,
      );
    }
    if (storageOffset < binarySize) {
      throw new DeviceRunnerError(
        'ERR_CHILD_OVERLAPS_ORCH',
        `child ${i} at storage offset ${storageOffset} overlaps the orch [0, ${binarySize})`,
      );
    }
    if (storageOffset >= storageSize) {
      throw new DeviceRunnerError(
        'ERR_CHILD_OUT_OF_RANGE',
        `child ${i} at storage offset ${storageOffset} is past the ${storageSize} storage bytes`,
      );
    }
    const imageOffset = layout.headerSize + storageOffset;
    const core = readCoreCallable(bytes, imageOffset, bytes.length);
    children.push({
      funcId: view.getInt32(layout.childFuncIds + 4 * i, true),
      storageOffset,
      imageOffset,
      imageSize: core.imageSize,
      signature: core.signature,
      binarySize: core.binarySize,
      resolvedAddr: core.resolvedAddr,
    });
    storageEnd = Math.max(storageEnd, storageOffset + core.imageSize);
  }

  const sorted = [...children].sort((a, b) => a.storageOffset - b.storageOffset);
  for (let i = 1; i < sorted.length; i++) {
    const previous = sorted[i - 1] as ChipChildView;
    const current = sorted[i] as ChipChildView;
    if (current.storageOffset < previous.storageOffset + previous.imageSize) {
      throw new DeviceRunnerError(
        'ERR_CHILDREN_OVERLAP',
        `child images at storage offsets ${previous.storageOffset} and ${current.storageOffset} overlap`,
      );
    }
  }

  const totalSize = layout.headerSize + storageEnd;
  if (totalSize !== bytes.length) {
    throw new DeviceRunnerError(
      'ERR_SIZE_MISMATCH',
      `the fields describe ${totalSize} bytes but the buffer holds ${bytes.length}`,
    );
  }

  return {
    layout,
    headerSize: layout.headerSize,
    totalSize,
    signature,
    binarySize,
    funcName,
    configName,
    children,
    orch: bytes.subarray(layout.headerSize, layout.headerSize + binarySize),
  };
}

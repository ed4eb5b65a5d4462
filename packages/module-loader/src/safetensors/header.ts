import { ModuleLoaderError } from '../errors.js';
import { DTYPE_BYTES, isSafetensorsDtype, type SafetensorsDtype } from './dtypes.js';
import {
  MAX_HEADER_BYTES,
  MAX_RANK,
  MAX_SAFE_BYTES,
  MAX_TENSOR_NAME_BYTES,
  MAX_TENSORS,
} from './limits.js';

export interface SafetensorsTensorInfo {
  name: string;
  dtype: SafetensorsDtype;
  shape: number[];
  /** Offset of the first byte from the start of the file. */
  fileOffset: number;
  byteLength: number;
}

export interface SafetensorsHeader {
  /** 8 + header length: where tensor data starts in the file. */
  dataOffset: number;
  tensors: SafetensorsTensorInfo[];
  metadata: Record<string, string>;
}

const LENGTH_PREFIX_BYTES = 8;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses and validates the header of a safetensors file.
 * `prefix` holds at least the first 8 + header-length bytes of the file (or the whole
 * file); `fileSize` is the file's size. Every offset is checked against the file size,
 * tensors must tile the data region without overlap or holes, and the header length is
 * capped before anything is decoded.
 */
export function parseSafetensorsHeader(
  prefix: Uint8Array,
  fileSize: number,
  file: string,
): SafetensorsHeader {
  const fail = (message: string, field?: string): never => {
    throw new ModuleLoaderError('ERR_SAFETENSORS_INVALID', `${file}: ${message}`, {
      file,
      ...(field === undefined ? {} : { field }),
    });
  };
  if (fileSize < LENGTH_PREFIX_BYTES || prefix.byteLength < LENGTH_PREFIX_BYTES) {
    fail(`file is ${fileSize} bytes; a safetensors file starts with an 8-byte header length`);
  }
  const view = new DataView(prefix.buffer, prefix.byteOffset, prefix.byteLength);
  const headerLength = view.getBigUint64(0, true);
  if (headerLength > BigInt(MAX_HEADER_BYTES)) {
    fail(
      `header length ${headerLength} exceeds the limit of ${MAX_HEADER_BYTES} bytes`,
      'header_length',
    );
  }
  const length = Number(headerLength);
  if (length < 2) fail(`header length ${length} is too small for a JSON object`, 'header_length');
  const dataOffset = LENGTH_PREFIX_BYTES + length;
  if (dataOffset > fileSize) {
    fail(`header length ${length} runs past the end of the ${fileSize}-byte file`, 'header_length');
  }
  if (prefix.byteLength < dataOffset) {
    fail(
      `only ${prefix.byteLength} bytes were given for a ${dataOffset}-byte header`,
      'header_length',
    );
  }
  let text: string;
  try {
    text = utf8.decode(prefix.subarray(LENGTH_PREFIX_BYTES, dataOffset));
  } catch {
    return fail('header is not valid UTF-8', 'header');
  }
  // The format pads the header with trailing spaces to align the data region.
  if (!text.startsWith('{')) fail('header does not start with a JSON object', 'header');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return fail(`header is not valid JSON (${(error as Error).message})`, 'header');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return fail('header is not a JSON object', 'header');
  }

  const dataSize = fileSize - dataOffset;
  const metadata: Record<string, string> = {};
  const tensors: SafetensorsTensorInfo[] = [];
  for (const [name, raw] of Object.entries(json as Record<string, unknown>)) {
    if (name === '__metadata__') {
      readMetadata(raw, metadata, fail);
      continue;
    }
    if (tensors.length >= MAX_TENSORS) fail(`more than ${MAX_TENSORS} tensors`, name);
    if (name.length === 0 || Buffer.byteLength(name) > MAX_TENSOR_NAME_BYTES) {
      fail(`tensor name must be 1..${MAX_TENSOR_NAME_BYTES} bytes`, name.slice(0, 64));
    }
    tensors.push(readTensor(name, raw, dataOffset, dataSize, fail));
  }
  checkTiling(tensors, dataOffset, dataSize, fail);
  return { dataOffset, tensors, metadata };
}

type Fail = (message: string, field?: string) => never;

function readMetadata(raw: unknown, out: Record<string, string>, fail: Fail): void {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    fail('__metadata__ must be an object of strings', '__metadata__');
  }
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof value !== 'string')
      fail(`__metadata__.${key} must be a string`, `__metadata__.${key}`);
    out[key] = value as string;
  }
}

function readTensor(
  name: string,
  raw: unknown,
  dataOffset: number,
  dataSize: number,
  fail: Fail,
): SafetensorsTensorInfo {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return fail(`tensor "${name}" must be an object with dtype, shape and data_offsets`, name);
  }
  const { dtype, shape, data_offsets: offsets } = raw as Record<string, unknown>;
  if (!isSafetensorsDtype(dtype)) {
    return fail(`tensor "${name}" has unknown dtype ${JSON.stringify(dtype)}`, `${name}.dtype`);
  }
  if (!Array.isArray(shape) || shape.length > MAX_RANK) {
    return fail(
      `tensor "${name}" shape must be an array of at most ${MAX_RANK} sizes`,
      `${name}.shape`,
    );
  }
  let elements = 1;
  for (const size of shape) {
    if (!Number.isSafeInteger(size) || (size as number) < 0) {
      return fail(
        `tensor "${name}" shape holds ${JSON.stringify(size)}, not a size`,
        `${name}.shape`,
      );
    }
    elements *= size as number;
    if (elements > MAX_SAFE_BYTES) fail(`tensor "${name}" has too many elements`, `${name}.shape`);
  }
  if (
    !Array.isArray(offsets) ||
    offsets.length !== 2 ||
    !offsets.every((offset) => Number.isSafeInteger(offset) && (offset as number) >= 0)
  ) {
    return fail(
      `tensor "${name}" data_offsets must be [begin, end] integers`,
      `${name}.data_offsets`,
    );
  }
  const [begin, end] = offsets as [number, number];
  if (begin > end || end > dataSize) {
    return fail(
      `tensor "${name}" data_offsets [${begin}, ${end}] are outside the ${dataSize}-byte data region`,
      `${name}.data_offsets`,
    );
  }
  const byteLength = elements * DTYPE_BYTES[dtype];
  if (byteLength !== end - begin) {
    return fail(
      `tensor "${name}" is ${dtype}[${shape.join(', ')}] = ${byteLength} bytes but data_offsets span ${end - begin}`,
      `${name}.data_offsets`,
    );
  }
  return { name, dtype, shape: shape as number[], fileOffset: dataOffset + begin, byteLength };
}

/** Like the reference implementation: tensors tile the data region, no overlap, no hole. */
function checkTiling(
  tensors: SafetensorsTensorInfo[],
  dataOffset: number,
  dataSize: number,
  fail: Fail,
): void {
  const sorted = [...tensors].sort(
    (a, b) => a.fileOffset - b.fileOffset || a.byteLength - b.byteLength,
  );
  let cursor = dataOffset;
  for (const tensor of sorted) {
    if (tensor.fileOffset !== cursor) {
      fail(
        tensor.fileOffset < cursor
          ? `tensor "${tensor.name}" overlaps the tensor before it`
          : `there is a hole of ${tensor.fileOffset - cursor} bytes before tensor "${tensor.name}"`,
        `${tensor.name}.data_offsets`,
      );
    }
    cursor += tensor.byteLength;
  }
  if (cursor !== dataOffset + dataSize) {
    fail(
      `${dataOffset + dataSize - cursor} bytes at the end of the data region belong to no tensor`,
      'data',
    );
  }
}

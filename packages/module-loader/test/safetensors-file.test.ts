import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  BackendRegistry,
  encodeSafetensors,
  HeapWeightsCacheSource,
  Module,
  ModuleLoaderError,
  SafetensorsFile,
  XnnpackBackend,
} from '../src/index.js';
import { writeLinearProgram } from './weights-programs.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'memlayer-safetensors-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file with raw tensor bytes and a header written by hand (not by encodeSafetensors). */
function writeRaw(name: string, header: Record<string, unknown>, data: number[]): string {
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
  const bytes = new Uint8Array(8 + json.length + data.length);
  new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
  bytes.set(Buffer.from(json), 8);
  bytes.set(data, 8 + json.length);
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

describe('SafetensorsFile', () => {
  test('f32 tensors are zero-copy views of the mapping, detached after close', () => {
    const path = join(dir, 'f32.safetensors');
    writeFileSync(
      path,
      encodeSafetensors([{ name: 'w', shape: [2, 2], data: new Float32Array([1, 2, 3, 4]) }]),
    );
    const file = SafetensorsFile.open(path);
    const view = file.get('w');
    expect(view?.shape).toEqual([2, 2]);
    expect([...(view?.data ?? [])]).toEqual([1, 2, 3, 4]);
    expect(file.get('w')).toBe(view);
    file.close();
    // The mapping is gone: the old view reads as empty, never as freed memory.
    expect(view?.data.length).toBe(0);
  });

  test('f16 and bf16 tensors are widened to f32 on load', () => {
    // f16: 1.0 = 0x3c00, -2.0 = 0xc000, 0.5 = 0x3800, 65504 = 0x7bff; bf16: 1.0 = 0x3f80, -3.0 = 0xc040
    const path = writeRaw(
      'half.safetensors',
      {
        h: { dtype: 'F16', shape: [4], data_offsets: [0, 8] },
        b: { dtype: 'BF16', shape: [2], data_offsets: [8, 12] },
      },
      [0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38, 0xff, 0x7b, 0x80, 0x3f, 0x40, 0xc0],
    );
    const file = SafetensorsFile.open(path);
    expect([...(file.get('h')?.data ?? [])]).toEqual([1, -2, 0.5, 65504]);
    expect([...(file.get('b')?.data ?? [])]).toEqual([1, -3]);
    file.close();
  });

  test('non-float dtypes are not offered as f32 tensors', () => {
    const path = writeRaw(
      'ints.safetensors',
      { i: { dtype: 'I32', shape: [1], data_offsets: [0, 4] } },
      [1, 0, 0, 0],
    );
    const file = SafetensorsFile.open(path);
    expect(file.tensors.get('i')?.dtype).toBe('I32');
    expect(file.get('i')).toBeUndefined();
    file.close();
  });

  test('a missing or empty file is a clear error naming the file', () => {
    for (const [name, content] of [
      ['empty.safetensors', ''],
      ['short.safetensors', 'abc'],
    ] as const) {
      const path = join(dir, name);
      writeFileSync(path, content);
      expect(() => SafetensorsFile.open(path)).toThrowError(
        expect.objectContaining({ code: 'ERR_SAFETENSORS_INVALID', file: path }),
      );
    }
    const missing = join(dir, 'missing.safetensors');
    let error: unknown;
    try {
      SafetensorsFile.open(missing);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ModuleLoaderError);
    expect((error as ModuleLoaderError).code).toBe('ERR_PROGRAM_IO');
    expect((error as ModuleLoaderError).file).toBe(missing);
  });
});

describe('content keys and changed files', () => {
  test('F32 keys are the SHA-256 of the stored bytes; F16 and BF16 of the same bytes differ', () => {
    const bytes = [0x00, 0x3c, 0x00, 0xc0];
    const path = writeRaw(
      'keys.safetensors',
      {
        f: { dtype: 'F32', shape: [1], data_offsets: [0, 4] },
        h: { dtype: 'F16', shape: [2], data_offsets: [4, 8] },
        b: { dtype: 'BF16', shape: [2], data_offsets: [8, 12] },
      },
      [...bytes, ...bytes, ...bytes],
    );
    const file = SafetensorsFile.open(path);
    const digest = createHash('sha256').update(Uint8Array.from(bytes)).digest('hex');
    expect(file.contentKey('f')).toBe(digest);
    expect(file.contentKey('h')).toBe(`${digest}.f16`);
    expect(file.contentKey('b')).toBe(`${digest}.bf16`);
    file.close();
  });

  test('a file rewritten after the program was loaded is ERR_WEIGHTS_CHANGED when a layer needs it', () => {
    const program = writeLinearProgram(join(dir, 'changed'), [
      { weight: 'w', out: 4, in: 4, seed: 1 },
    ]);
    const weights = join(dir, 'changed', 'weights-0.safetensors');
    const module = new Module(program, {
      registry: new BackendRegistry().register(
        new XnnpackBackend({ caches: new HeapWeightsCacheSource() }),
      ),
    });
    module.load();
    const bytes = readFileSync(weights);
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) ^ 0xff;
    writeFileSync(weights, bytes);
    let code: unknown;
    try {
      module.loadMethod('forward');
    } catch (error) {
      code = (error as ModuleLoaderError).code;
    }
    expect(code).toBe('ERR_WEIGHTS_CHANGED');
    module.dispose();
  });
});

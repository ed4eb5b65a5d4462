import { spawnSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ContainedPaths } from '../src/files/contained-path.js';
import {
  AscendSimBackend,
  BackendRegistry,
  encodeSafetensors,
  loadProgram,
  MAX_CALLABLE_BYTES,
  MAX_MANIFEST_BYTES,
  Module,
  ModuleLoaderError,
  readRegularFile,
  resolveContainedPath,
} from '../src/index.js';

const CHILD = fileURLToPath(new URL('./fixtures/load-program-file.ts', import.meta.url));

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof ModuleLoaderError) return error.code;
    throw error;
  }
  throw new Error('expected a ModuleLoaderError, nothing was thrown');
}

let base: string;
let root: string;
let outside: string;
const ctx = { file: 'program.json', field: 'test' };

function writeManifest(fields: { weights?: string[]; callable?: string }): string {
  const methods =
    fields.callable === undefined
      ? { forward: { backend: 'AscendSimBackend', callable: 'model.chipcallable', callableId: 1 } }
      : { npu: { backend: 'AscendSimBackend', callable: fields.callable, callableId: 1 } };
  const path = join(root, 'program.json');
  writeFileSync(
    path,
    JSON.stringify({ format: 'memlayer-program', version: 1, weights: fields.weights, methods }),
  );
  return path;
}

function safetensors(): Uint8Array {
  return encodeSafetensors([{ name: 'w', shape: [2], data: Float32Array.of(1, 2) }]);
}

/** Runs the child with a timeout: a blocking open fails the test instead of hanging it. */
function childCode(programPath: string, method?: string): string {
  const args = ['--conditions=memlayer-source', '--import', 'tsx', CHILD, programPath];
  if (method !== undefined) args.push(method);
  // 100 s: a hang, not a slow start of a loaded machine.
  const result = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 100_000 });
  expect(result.signal, `child hung and was killed; stderr: ${result.stderr}`).toBeNull();
  expect(result.status, result.stderr).toBe(0);
  return (JSON.parse(result.stdout.trim()) as { code: string }).code;
}

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'memlayer-files-')));
  root = join(base, 'program');
  outside = join(base, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('resolveContainedPath', () => {
  test('a file or a symlink that stays inside resolves to its real path', () => {
    writeFileSync(join(root, 'a.bin'), 'a');
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'sub', 'b.bin'), 'b');
    symlinkSync('sub/b.bin', join(root, 'link.bin'));
    symlinkSync('sub', join(root, 'linked-sub'));
    expect(resolveContainedPath(root, 'a.bin', ctx)).toBe(join(root, 'a.bin'));
    expect(resolveContainedPath(root, 'link.bin', ctx)).toBe(join(root, 'sub', 'b.bin'));
    expect(resolveContainedPath(root, 'linked-sub/b.bin', ctx)).toBe(join(root, 'sub', 'b.bin'));
    expect(resolveContainedPath(root, 'sub/../a.bin', ctx)).toBe(join(root, 'a.bin'));
  });

  test('a symlinked file or folder that leads outside is ERR_PATH_OUTSIDE_PROGRAM', () => {
    writeFileSync(join(outside, 'secret.bin'), 'x');
    symlinkSync(join(outside, 'secret.bin'), join(root, 'file-link.bin'));
    symlinkSync('../outside', join(root, 'folder-link'));
    expect(codeOf(() => resolveContainedPath(root, 'file-link.bin', ctx))).toBe(
      'ERR_PATH_OUTSIDE_PROGRAM',
    );
    expect(codeOf(() => resolveContainedPath(root, 'folder-link/secret.bin', ctx))).toBe(
      'ERR_PATH_OUTSIDE_PROGRAM',
    );
    expect(codeOf(() => resolveContainedPath(root, '../outside/secret.bin', ctx))).toBe(
      'ERR_PATH_OUTSIDE_PROGRAM',
    );
    expect(codeOf(() => resolveContainedPath(root, join(outside, 'secret.bin'), ctx))).toBe(
      'ERR_PATH_OUTSIDE_PROGRAM',
    );
  });

  test('a dangling symlink is ERR_PROGRAM_IO and creates nothing at its target', () => {
    symlinkSync(join(outside, 'missing.bin'), join(root, 'dangling.bin'));
    const error = (() => {
      try {
        resolveContainedPath(root, 'dangling.bin', ctx);
      } catch (caught) {
        return caught as ModuleLoaderError;
      }
      throw new Error('expected an error');
    })();
    expect(error.code).toBe('ERR_PROGRAM_IO');
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ENOENT');
    expect(codeOf(() => readRegularFile(join(outside, 'missing.bin'), 10, ctx))).toBe(
      'ERR_PROGRAM_IO',
    );
  });

  test('a folder resolver lstats a plain name once and hands that stat on; links go the long way', () => {
    writeFileSync(join(root, 'a.bin'), 'a');
    mkdirSync(join(root, 'sub'));
    writeFileSync(join(root, 'sub', 'b.bin'), 'b');
    symlinkSync('sub/b.bin', join(root, 'link.bin'));
    writeFileSync(join(outside, 'secret.bin'), 'x');
    symlinkSync(join(outside, 'secret.bin'), join(root, 'file-link.bin'));
    const contained = new ContainedPaths(root, ctx);
    const plain = contained.resolve('a.bin', ctx);
    expect(plain.path).toBe(join(root, 'a.bin'));
    expect(plain.stat?.ino).toBe(statSync(join(root, 'a.bin'), { bigint: true }).ino);
    expect(contained.resolve('link.bin', ctx)).toEqual({
      path: join(root, 'sub', 'b.bin'),
      stat: undefined,
    });
    expect(contained.resolve('sub/b.bin', ctx).stat).toBeUndefined();
    expect(codeOf(() => contained.resolve('file-link.bin', ctx))).toBe('ERR_PATH_OUTSIDE_PROGRAM');
    expect(codeOf(() => contained.resolve('..', ctx))).toBe('ERR_PATH_OUTSIDE_PROGRAM');
    expect(codeOf(() => contained.resolve('missing.bin', ctx))).toBe('ERR_PROGRAM_IO');
    // A folder under a plain name is found, and refused where a file is needed.
    expect(contained.resolve('sub', ctx).stat?.isDirectory()).toBe(true);
  });

  test('a NUL byte in either path is ERR_PATH_INVALID (never cut at the NUL)', () => {
    expect(codeOf(() => resolveContainedPath(root, '..\0/x', ctx))).toBe('ERR_PATH_INVALID');
    expect(codeOf(() => resolveContainedPath(`${root}\0`, 'a.bin', ctx))).toBe('ERR_PATH_INVALID');
    expect(codeOf(() => readRegularFile(`${root}/a\0b`, 10, ctx))).toBe('ERR_PATH_INVALID');
  });
});

describe('readRegularFile', () => {
  test('reads a regular file whole; the cap is inclusive', () => {
    writeFileSync(join(root, 'ten.bin'), '0123456789');
    expect(Buffer.from(readRegularFile(join(root, 'ten.bin'), 10, ctx)).toString()).toBe(
      '0123456789',
    );
    expect(codeOf(() => readRegularFile(join(root, 'ten.bin'), 9, ctx))).toBe('ERR_FILE_TOO_LARGE');
  });

  test('/dev/zero and a directory are ERR_NOT_A_REGULAR_FILE', () => {
    expect(codeOf(() => readRegularFile('/dev/zero', MAX_CALLABLE_BYTES, ctx))).toBe(
      'ERR_NOT_A_REGULAR_FILE',
    );
    expect(codeOf(() => readRegularFile(root, MAX_CALLABLE_BYTES, ctx))).toBe(
      'ERR_NOT_A_REGULAR_FILE',
    );
  });

  test('a 600 MiB sparse manifest is ERR_FILE_TOO_LARGE without being read', () => {
    const path = join(root, 'program.json');
    writeFileSync(path, '');
    truncateSync(path, 600 * 1024 * 1024);
    const peakBefore = process.resourceUsage().maxRSS;
    expect(codeOf(() => loadProgram(path, 'minimal'))).toBe('ERR_FILE_TOO_LARGE');
    expect(codeOf(() => readRegularFile(path, MAX_MANIFEST_BYTES, ctx))).toBe('ERR_FILE_TOO_LARGE');
    // maxRSS is in KiB; reading the file would have added 600 MiB.
    expect(process.resourceUsage().maxRSS - peakBefore).toBeLessThan(64 * 1024);
  });
});

describe('program files through Module', () => {
  function callableModule(): Module {
    return new Module(join(root, 'program.json'), {
      registry: new BackendRegistry().register(new AscendSimBackend()),
    });
  }

  test('weights that are a symlink, or sit in a symlinked folder, leading outside are refused', () => {
    writeFileSync(join(outside, 'w.safetensors'), safetensors());
    symlinkSync(join(outside, 'w.safetensors'), join(root, 'w.safetensors'));
    symlinkSync(outside, join(root, 'weights'));
    for (const weights of ['w.safetensors', 'weights/w.safetensors']) {
      const path = writeManifest({ weights: [weights] });
      expect(codeOf(() => loadProgram(path, 'minimal'))).toBe('ERR_PATH_OUTSIDE_PROGRAM');
    }
  });

  test('weights behind a symlink inside the folder load', () => {
    mkdirSync(join(root, 'store'));
    writeFileSync(join(root, 'store', 'w.safetensors'), safetensors());
    symlinkSync('store/w.safetensors', join(root, 'w.safetensors'));
    const program = loadProgram(writeManifest({ weights: ['w.safetensors'] }), 'minimal');
    expect(program.namedData.get('w')).toBeDefined();
    program.close();
  });

  test('a callable symlinked outside the folder is ERR_PATH_OUTSIDE_PROGRAM on loadMethod', () => {
    writeFileSync(join(outside, 'model.chipcallable'), new Uint8Array(64));
    symlinkSync(join(outside, 'model.chipcallable'), join(root, 'model.chipcallable'));
    writeManifest({ callable: 'model.chipcallable' });
    const module = callableModule();
    module.load();
    expect(codeOf(() => module.loadMethod('npu'))).toBe('ERR_PATH_OUTSIDE_PROGRAM');
  });

  test('/dev/zero as manifest, or linked as callable, is a typed error', () => {
    expect(codeOf(() => new Module('/dev/zero', { registry: new BackendRegistry() }).load())).toBe(
      'ERR_NOT_A_REGULAR_FILE',
    );
    symlinkSync('/dev/zero', join(root, 'zero'));
    writeManifest({ callable: 'zero' });
    const module = callableModule();
    module.load();
    expect(codeOf(() => module.loadMethod('npu'))).toBe('ERR_PATH_OUTSIDE_PROGRAM');
  });

  test('a NUL byte in a weights or callable name, or the program path, is ERR_PATH_INVALID', () => {
    expect(codeOf(() => loadProgram(writeManifest({ weights: ['..\0/x'] }), 'minimal'))).toBe(
      'ERR_PATH_INVALID',
    );
    writeManifest({ callable: 'model\0.chipcallable' });
    const module = callableModule();
    module.load();
    expect(codeOf(() => module.loadMethod('npu'))).toBe('ERR_PATH_INVALID');
    expect(codeOf(() => loadProgram(`${root}/program.json\0.x`, 'minimal'))).toBe(
      'ERR_PATH_INVALID',
    );
  });

  test('a FIFO as manifest, callable or weights errors at once instead of blocking', () => {
    const fifo = join(root, 'fifo');
    const made = spawnSync('mkfifo', [fifo]);
    expect(made.status, String(made.stderr)).toBe(0);
    expect(childCode(fifo)).toBe('ERR_NOT_A_REGULAR_FILE');
    expect(childCode(writeManifest({ callable: 'fifo' }), 'npu')).toBe('ERR_NOT_A_REGULAR_FILE');
    expect(childCode(writeManifest({ weights: ['fifo'] }))).toBe('ERR_NOT_A_REGULAR_FILE');
  });
});

import { mkdtempSync, realpathSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildChipCallable, DeviceRunnerError, orchestrationObject } from '@memlayer/device-runner';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  AscendSimBackend,
  BackendRegistry,
  MAX_CALLABLE_BYTES,
  Module,
  ModuleLoaderError,
} from '../src/index.js';

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'memlayer-ascend-files-')));
  writeFileSync(
    join(dir, 'program.json'),
    JSON.stringify({
      format: 'memlayer-program',
      version: 1,
      methods: {
        npu: { backend: 'AscendSimBackend', callable: 'npu.chipcallable', callableId: 2 },
      },
    }),
  );
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function loadNpu(): ModuleLoaderError {
  const module = new Module(join(dir, 'program.json'), {
    registry: new BackendRegistry().register(new AscendSimBackend()),
  });
  try {
    module.loadMethod('npu');
  } catch (error) {
    expect(error).toBeInstanceOf(ModuleLoaderError);
    return error as ModuleLoaderError;
  } finally {
    module.dispose();
  }
  throw new Error('expected loadMethod to fail');
}

describe('AscendSimBackend callable files', () => {
  test('a well-formed callable loads', () => {
    const callable = buildChipCallable({
      orch: orchestrationObject(1),
      children: [{ funcId: 0, core: { binary: new Uint8Array(256).fill(7) } }],
    });
    writeFileSync(join(dir, 'npu.chipcallable'), callable);
    const module = new Module(join(dir, 'program.json'), {
      registry: new BackendRegistry().register(new AscendSimBackend()),
    });
    module.loadMethod('npu');
    expect(module.isMethodLoaded('npu')).toBe(true);
    module.dispose();
  });

  test("the runner's typed error surfaces as ERR_BACKEND_INIT_FAILED with the runner's code as cause", () => {
    writeFileSync(join(dir, 'npu.chipcallable'), new Uint8Array(100).fill(0xee));
    const error = loadNpu();
    expect(error.code).toBe('ERR_BACKEND_INIT_FAILED');
    expect(error.field).toBe('methods.npu.callable');
    expect(error.cause).toBeInstanceOf(DeviceRunnerError);
    expect((error.cause as DeviceRunnerError).code).toMatch(/^ERR_/);
  });

  test('a callable over MAX_CALLABLE_BYTES is ERR_FILE_TOO_LARGE without being read', () => {
    const path = join(dir, 'npu.chipcallable');
    writeFileSync(path, '');
    truncateSync(path, MAX_CALLABLE_BYTES + 1); // sparse: no disk, and reading it would cost 256 MiB
    const peakBefore = process.resourceUsage().maxRSS;
    expect(loadNpu().code).toBe('ERR_FILE_TOO_LARGE');
    expect(process.resourceUsage().maxRSS - peakBefore).toBeLessThan(64 * 1024); // KiB
  });
});

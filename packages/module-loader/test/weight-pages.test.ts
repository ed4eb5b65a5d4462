// A cold load packs every layer in one synchronous pass: each layer's weight pages must
// leave the process once it is packed, not when the load is over.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BackendOptions,
  BackendRegistry,
  LoadBackendOptionsMap,
  Module,
  XnnpackBackend,
} from '../src/index.js';
import { heapOnlyOutput, programInput, sha256, writeLinearProgram } from './weights-programs.js';

const MiB = 1024 * 1024;

/** File-backed pages mapped into this process (RssFile of /proc/self/status), in bytes. */
function residentFileBytes(): number {
  const status = readFileSync('/proc/self/status', 'utf8');
  return Number(/^RssFile:\s+(\d+) kB/m.exec(status)?.[1]) * 1024;
}

describe('weight pages during a cold load', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'memlayer-pages-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['24 layers of 512 x 512', 'a cache file', 24, 512, true],
    ['24 layers of 512 x 512', 'the heap only', 24, 512, false],
    ['1536 layers of 64 x 64', 'a cache file', 1536, 64, true],
  ])('keeps little resident: %s packed into %s', (_model, _into, count, size, withFile) => {
    // 24 MiB of weights, every byte read once while packing.
    const layers = Array.from({ length: count }, (_, i) => ({
      weight: `w${i}`,
      bias: `b${i}`,
      out: size,
      in: size,
      seed: 10 * i + 1,
    }));
    const manifestPath = writeLinearProgram(join(dir, 'program'), layers);
    const options = new BackendOptions();
    if (withFile) options.setOption('packed_cache_path', join(dir, 'cache.xpwc'));
    const module = new Module(manifestPath, {
      registry: new BackendRegistry().register(new XnnpackBackend()),
    });
    const before = residentFileBytes();
    module.load(new LoadBackendOptionsMap().setOptions('XnnpackBackend', options));
    module.loadMethod('forward');
    // Read in the same synchronous pass as the load: no deferred unmapping has run yet.
    const grown = residentFileBytes() - before;
    expect(grown).toBeLessThan(8 * MiB);
    const [output] = module.execute('forward', [programInput(module.programManifest())]);
    expect(sha256(output?.data ?? new Float32Array(0))).toBe(heapOnlyOutput(manifestPath));
    module.dispose();
  });
});

import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lastJson, makeTempDir, runNodeFixture } from './helpers.js';

interface GcReport {
  count: number;
  peak: number;
  beforeGc: number;
  afterGc: number;
  sameAddress: number;
  survivorLines: number;
  readable: number;
  afterClose: number;
}

// /proc/self/maps is Linux-only; the heap backend has no kernel mappings to leak.
describe.skipIf(process.platform !== 'linux')('GC safety net (posix)', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('thousands of maps dropped without close() leave no mapping after GC', async () => {
    const result = await runNodeFixture('gc-maps.ts', [join(dir, 'gc.bin'), '5000'], {
      nodeFlags: ['--expose-gc'],
    });
    expect(result.signal).toBeNull();
    expect(result.code).toBe(0);
    const report = lastJson<GcReport>(result);
    expect(report.count).toBe(5000);
    expect(report.peak).toBeGreaterThan(0); // mappings really were there before GC
    expect(report.afterGc).toBe(0);
    // close() followed by the finalizer of the same mapping never unmaps twice: the 200
    // mappings made after closing (usually at the very same address) all survive GC.
    expect(report.sameAddress).toBeGreaterThan(0);
    expect(report.survivorLines).toBe(200);
    expect(report.readable).toBe(200);
    expect(report.afterClose).toBe(0);
  });

  it('mappings left open in a worker and at exit end cleanly', async () => {
    const result = await runNodeFixture('lifecycle.ts', [join(dir, 'life.bin')]);
    expect(result.stderr).toBe('');
    expect(result.signal).toBeNull();
    expect(result.code).toBe(0);
    expect(lastJson(result)).toEqual({ exitCode: 0, fromWorker: 1, onDisk: [1, 2] });
  });
});

interface ExternalReport {
  length: number;
  firstMapping: number;
  closeCycles: number;
  mappingAgain: number;
  heapBuffers: number;
}

describe.skipIf(process.platform !== 'linux')('mapped pages and V8 garbage collection', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('mapping 240 MiB starts no full collection, before or after closing mappings', async () => {
    const result = await runNodeFixture('external-memory.ts', [join(dir, 'external.bin')], {
      nodeFlags: ['--expose-gc'],
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = lastJson<ExternalReport>(result);
    expect(report.length).toBe(240 * 1024 * 1024);
    // Counted as external memory, mapped bytes would start collections as the control's do
    // (1–3 for its 240 MiB), and the three windows map seven times that (first mapping, five
    // close cycles, mapping again). V8 also collects for its own reasons (its memory reducer,
    // on a loaded machine), so one collection across the windows is tolerated.
    expect(report.firstMapping + report.closeCycles + report.mappingAgain).toBeLessThanOrEqual(1);
    // The control: the same bytes as heap ArrayBuffers do start full collections.
    expect(report.heapBuffers).toBeGreaterThan(0);
  });
});

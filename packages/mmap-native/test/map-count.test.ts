// The live mapping count and the ENOMEM it explains: vm.max_map_count (which Node must
// never reach: V8 aborts when it cannot mmap) and the address-space limit.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MmapError, readMaxMapCount } from '../src/index.js';
import { checkMapBudget, explainMapFailure, MAP_COUNT_HEADROOM } from '../src/map-count.js';
import { fixture, lastJson, makeTempDir, nodeArgs, runChild } from './helpers.js';

interface Report {
  before: number;
  mapped: number;
  liveAtFailure: number;
  liveAfterClose: number;
  code?: string;
  errno?: number;
  syscall?: string;
  path?: string;
  message?: string;
  hasCause: boolean;
}

const isLinux = process.platform === 'linux';

describe('ENOMEM explanations (formatting)', () => {
  it('an mmap ENOMEM names the live count and vm.max_map_count; others pass unchanged', () => {
    const original = MmapError.fromErrno(12, 'mmap', '/data/x.bin');
    const explained = explainMapFailure(original, 4321, 65530) as MmapError;
    expect(explained).toBeInstanceOf(MmapError);
    expect(explained.code).toBe('ENOMEM');
    expect(explained.errno).toBe(12);
    expect(explained.syscall).toBe('mmap');
    expect(explained.path).toBe('/data/x.bin');
    expect(explained.cause).toBe(original);
    expect(explained.message).toBe(
      "ENOMEM: not enough memory, mmap '/data/x.bin': 4321 mappings made by " +
        '@memlayer/mmap-native are live in this process. Each one counts toward the ' +
        "kernel's per-process limit vm.max_map_count (65530 here), and the address space " +
        '(ulimit -v) bounds their total size: close mappings you no longer use, or map ' +
        'fewer, larger ranges.',
    );
    const other = MmapError.fromErrno(13, 'mmap', '/data/x.bin');
    expect(explainMapFailure(other, 1, 65530)).toBe(other);
    const notOurs = new Error('x');
    expect(explainMapFailure(notOurs, 1, 65530)).toBe(notOurs);
  });

  it('the budget check refuses before the runtime loses its headroom', () => {
    const limit = 10_000;
    expect(() => checkMapBudget(limit - MAP_COUNT_HEADROOM - 1, '/f', limit)).not.toThrow();
    let error: MmapError | undefined;
    try {
      checkMapBudget(limit - MAP_COUNT_HEADROOM, '/f', limit);
    } catch (caught) {
      error = caught as MmapError;
    }
    expect(error).toBeInstanceOf(MmapError);
    expect(error?.code).toBe('ENOMEM');
    expect(error?.message).toContain(`${limit - MAP_COUNT_HEADROOM} mappings made by`);
    expect(error?.message).toContain('vm.max_map_count (10000 here)');
    expect(() => checkMapBudget(1_000_000, '/f', null)).not.toThrow(); // limit unknown
  });
});

describe.skipIf(!isLinux)('mapping limits in a real process (Linux)', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('near vm.max_map_count: ENOMEM with the live count instead of a Node abort', async () => {
    const limit = readMaxMapCount();
    expect(limit).not.toBeNull();
    const path = join(dir, 'many.bin');
    const result = await runChild(
      process.execPath,
      [...nodeArgs(fixture('map-until-refused.ts')), path, '4096'],
      { timeoutMs: 110_000 },
    ); // 63k maps and a tsx start take tens of seconds on a loaded machine
    expect(result.signal, result.stderr).toBeNull();
    expect(result.code, result.stderr).toBe(0);
    const report = lastJson<Report>(result);
    expect(report.code).toBe('ENOMEM');
    expect(report.errno).toBe(12);
    expect(report.syscall).toBe('mmap');
    expect(report.path).toBe(path);
    expect(report.liveAtFailure).toBe(report.before + report.mapped);
    expect(report.liveAtFailure).toBe((limit ?? 0) - MAP_COUNT_HEADROOM);
    expect(report.message).toContain(`${report.liveAtFailure} mappings made by`);
    expect(report.message).toContain(`vm.max_map_count (${limit} here)`);
    expect(report.liveAfterClose).toBe(report.before);
  });

  it('out of address space (RLIMIT_AS): the kernel ENOMEM is explained too', async () => {
    const path = join(dir, 'big.bin');
    // 1 GiB windows with 6 GiB of address space to spare: the kernel refuses after a few.
    const result = await runChild(process.execPath, [
      ...nodeArgs(fixture('map-until-refused.ts')),
      path,
      String(1024 ** 3),
      String(6 * 1024 ** 3),
    ]);
    expect(result.code, result.stderr).toBe(0);
    const report = lastJson<Report>(result);
    expect(report.code).toBe('ENOMEM');
    expect(report.hasCause).toBe(true); // the kernel's own error, rewritten
    expect(report.mapped).toBeGreaterThan(0);
    expect(report.mapped).toBeLessThan(8);
    expect(report.message).toMatch(
      /^ENOMEM: not enough memory, mmap '.*big\.bin': \d+ mappings made by/,
    );
    expect(report.message).toContain(`${report.liveAtFailure} mappings made by`);
    expect(report.liveAfterClose).toBe(report.before);
  });
});

// The loader, exercised on copies of the package: one never built, one with a broken
// binary. The real build is never touched.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAddon } from '../src/backends/posix/addon.js';
import { BUILD_COMMAND } from '../src/index.js';
import { lastJson, makeTempDir, nodeArgs, packageDir, runChild } from './helpers.js';

interface Probe {
  backend?: string;
  isMmapError?: boolean;
  code?: string;
  message?: string;
}

function copyPackage(into: string): string {
  const root = join(into, 'mmap-native');
  cpSync(join(packageDir, 'src'), join(root, 'src'), {
    recursive: true,
    filter: (source) => !source.includes('/native'),
  });
  cpSync(join(packageDir, 'package.json'), join(root, 'package.json'));
  mkdirSync(join(root, 'test', 'fixtures'), { recursive: true });
  cpSync(
    join(packageDir, 'test', 'fixtures', 'loader-probe.ts'),
    join(root, 'test', 'fixtures', 'loader-probe.ts'),
  );
  return root;
}

async function probe(root: string, choice: string, dir: string): Promise<Probe> {
  // cwd stays in this package so `--import tsx` resolves.
  const result = await runChild(process.execPath, [
    ...nodeArgs(join(root, 'test', 'fixtures', 'loader-probe.ts')),
    choice,
    dir,
  ]);
  expect(result.code).toBe(0);
  return lastJson<Probe>(result);
}

describe('addon loader', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  // The posix suites run on Linux whether or not the addon loads; this names the cause.
  it.runIf(process.platform === 'linux')('the addon loads on Linux (errors fail here)', () => {
    const addon = loadAddon();
    expect(addon.supported).toBe(true);
    expect(addon.externalBuffersAllowed()).toBe(true);
  });

  it('says exactly what to run when the addon was never built', async () => {
    const root = copyPackage(join(dir, 'unbuilt'));
    const forced = await probe(root, 'posix', dir);
    expect(forced.isMmapError).toBe(true);
    expect(forced.code).toBe('ERR_MMAP_ADDON_NOT_BUILT');
    expect(forced.message).toContain(`Run \`${BUILD_COMMAND}\``);
    expect(BUILD_COMMAND).toBe('pnpm --filter @memlayer/mmap-native build:addon');
    // Automatic selection falls back to the heap backend, which works.
    expect(await probe(root, 'auto', dir)).toEqual({ backend: 'heap' });
  });

  it('rethrows other load errors instead of hiding them', async () => {
    const root = copyPackage(join(dir, 'broken'));
    mkdirSync(join(root, 'build', 'Release'), { recursive: true });
    writeFileSync(join(root, 'build', 'Release', 'mmap_native.node'), 'not an ELF file');
    for (const choice of ['auto', 'posix']) {
      const result = await probe(root, choice, dir);
      expect(result.isMmapError).toBe(false);
      expect(result.code).toBe('ERR_DLOPEN_FAILED');
    }
    // The heap backend still works: it only borrows flock from the addon.
    expect(await probe(root, 'heap', dir)).toEqual({ backend: 'heap' });
  });
});

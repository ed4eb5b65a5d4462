// The loader, exercised on copies of the package: one never built, one with a broken
// binary. The real build is never touched.
import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAddon } from '../src/backends/posix/addon.js';
import { BUILD_COMMAND, HEAP_FALLBACK_WARNING } from '../src/index.js';
import { lastJson, makeTempDir, nodeArgs, packageDir, runChild } from './helpers.js';

interface Probe {
  backend?: string;
  isMmapError?: boolean;
  code?: string;
  message?: string;
  warnings?: string[];
}

function copyPackage(into: string): string {
  const root = join(into, 'mmap-native');
  cpSync(join(packageDir, 'src'), join(root, 'src'), {
    recursive: true,
    filter: (source) => !source.includes('/native'),
  });
  cpSync(join(packageDir, 'package.json'), join(root, 'package.json'));
  // The copy resolves its dependencies (e.g. @memlayer/internal) as the package does.
  symlinkSync(join(packageDir, 'node_modules'), join(root, 'node_modules'), 'dir');
  mkdirSync(join(root, 'test', 'fixtures'), { recursive: true });
  cpSync(
    join(packageDir, 'test', 'fixtures', 'loader-probe.ts'),
    join(root, 'test', 'fixtures', 'loader-probe.ts'),
  );
  return root;
}

async function probe(root: string, choice: string, dir: string, opens = 1): Promise<Probe> {
  // cwd stays in this package so `--import tsx` resolves.
  const result = await runChild(process.execPath, [
    ...nodeArgs(join(root, 'test', 'fixtures', 'loader-probe.ts')),
    choice,
    dir,
    String(opens),
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
    expect(forced.message).toContain(`run \`${BUILD_COMMAND}\``);
    expect(forced.message).toContain('`npm rebuild @memlayer/mmap-native`');
    expect(forced.message).toContain('pnpm rebuild @memlayer/mmap-native');
    expect(BUILD_COMMAND).toBe('pnpm --filter @memlayer/mmap-native build:addon');
    expect(forced.warnings).toEqual([]);
    // Automatic selection falls back to the heap backend, which works, and says so once.
    expect(await probe(root, 'auto', dir, 3)).toEqual({
      backend: 'heap',
      warnings: [HEAP_FALLBACK_WARNING],
    });
    // Asking for the heap backend is not a fallback: no warning.
    expect(await probe(root, 'heap', dir)).toEqual({ backend: 'heap', warnings: [] });
  });

  it.runIf(process.platform === 'linux')(
    'loads a prebuild shipped in prebuilds/<platform>-<arch>, only with the right libc',
    async () => {
      const root = copyPackage(join(dir, 'prebuilt'));
      const folder = join(root, 'prebuilds', `${process.platform}-${process.arch}`);
      mkdirSync(folder, { recursive: true });
      const built = join(packageDir, 'build', 'Release', 'mmap_native.node');
      // A musl build is not loaded on glibc (nor anything that is not a Node-API build).
      cpSync(built, join(folder, 'node.napi.musl.node'));
      cpSync(built, join(folder, 'node.abi115.glibc.node'));
      expect(await probe(root, 'auto', dir)).toEqual({
        backend: 'heap',
        warnings: [HEAP_FALLBACK_WARNING],
      });
      // A prebuild that does not load (a system older than it needs) counts as missing.
      writeFileSync(join(folder, 'node.napi.glibc.node'), 'not an ELF file');
      expect(await probe(root, 'auto', dir)).toEqual({
        backend: 'heap',
        warnings: [HEAP_FALLBACK_WARNING],
      });
      const forced = await probe(root, 'posix', dir);
      expect(forced.code).toBe('ERR_MMAP_ADDON_NOT_BUILT');
      expect(forced.message).toContain('node.napi.glibc.node did not load');
      cpSync(built, join(folder, 'node.napi.glibc.node'));
      expect(await probe(root, 'auto', dir)).toEqual({ backend: 'posix', warnings: [] });
      expect(await probe(root, 'posix', dir)).toEqual({ backend: 'posix', warnings: [] });
    },
  );

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
    expect(await probe(root, 'heap', dir)).toEqual({ backend: 'heap', warnings: [] });
  });
});

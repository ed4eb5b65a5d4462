// The loader, exercised on copies of the package: one with nothing built, one with this
// platform's package installed (working or broken), one with a broken source build. The
// real build and the workspace's platform package are never touched. Each copy is probed
// from its sources and from its build (dist/index.js, one bundled file, where the loader's
// module is no longer in src/backends/posix/): the addon is found from either.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAddon } from '../src/backends/posix/addon.js';
import { platformPackageName } from '../src/backends/posix/platform-package.js';
import { BUILD_COMMAND, HEAP_FALLBACK_WARNING, loadGemmKernels } from '../src/index.js';
import { lastJson, makeTempDir, nodeArgs, packageDir, runChild } from './helpers.js';

interface Probe {
  backend?: string;
  gemm?: string | null;
  xnnGraph?: string | null;
  isMmapError?: boolean;
  code?: string;
  message?: string;
  warnings?: string[];
}

const built = join(packageDir, 'addon', 'build', 'Release', 'mmap_native.node');
const PLATFORM_PACKAGE = platformPackageName();

/**
 * A copy of the package whose node_modules links the real dependencies except this
 * platform's package, which is absent, or a folder holding `platformAddon` when given: in
 * the copy's node_modules, or `beside` it (into/mmap-native-<platform>, as npm hoists
 * both into node_modules/@memlayer/).
 */
function copyPackage(
  into: string,
  platformAddon?: string | Buffer,
  placement: 'nested' | 'beside' = 'nested',
): string {
  const root = join(into, 'mmap-native');
  cpSync(join(packageDir, 'src'), join(root, 'src'), {
    recursive: true,
    filter: (source) => !source.includes('/native'),
  });
  // The build, made by turbo before tests.
  cpSync(join(packageDir, 'dist'), join(root, 'dist'), { recursive: true });
  cpSync(join(packageDir, 'package.json'), join(root, 'package.json'));
  const modules = join(root, 'node_modules');
  mkdirSync(join(modules, '@memlayer'), { recursive: true });
  for (const name of readdirSync(join(packageDir, 'node_modules'))) {
    if (name === '@memlayer') continue;
    symlinkSync(join(packageDir, 'node_modules', name), join(modules, name));
  }
  for (const name of readdirSync(join(packageDir, 'node_modules', '@memlayer'))) {
    if (`@memlayer/${name}` === PLATFORM_PACKAGE) continue;
    symlinkSync(
      join(packageDir, 'node_modules', '@memlayer', name),
      join(modules, '@memlayer', name),
    );
  }
  if (platformAddon !== undefined) {
    const platformDir =
      placement === 'nested'
        ? join(modules, PLATFORM_PACKAGE)
        : join(into, PLATFORM_PACKAGE.slice('@memlayer/'.length));
    mkdirSync(platformDir, { recursive: true });
    writeFileSync(
      join(platformDir, 'package.json'),
      JSON.stringify({ name: PLATFORM_PACKAGE, version: '0.0.0', main: './mmap_native.node' }),
    );
    writeFileSync(join(platformDir, 'mmap_native.node'), platformAddon);
  }
  mkdirSync(join(root, 'test', 'fixtures'), { recursive: true });
  cpSync(
    join(packageDir, 'test', 'fixtures', 'loader-probe.ts'),
    join(root, 'test', 'fixtures', 'loader-probe.ts'),
  );
  return root;
}

function sourceBuild(root: string, contents: string | Buffer): void {
  mkdirSync(join(root, 'addon', 'build', 'Release'), { recursive: true });
  writeFileSync(join(root, 'addon', 'build', 'Release', 'mmap_native.node'), contents);
}

type From = 'src' | 'dist';

async function probe(
  root: string,
  from: From,
  choice: string,
  dir: string,
  opens = 1,
): Promise<Probe> {
  // cwd stays in this package so `--import tsx` resolves.
  const result = await runChild(process.execPath, [
    ...nodeArgs(join(root, 'test', 'fixtures', 'loader-probe.ts')),
    choice,
    dir,
    String(opens),
    from,
  ]);
  expect(result.code).toBe(0);
  const { gemm, xnnGraph, ...rest } = lastJson<Probe>(result);
  gemmByProbe.set(root, gemm);
  xnnGraphByProbe.set(root, xnnGraph);
  return rest;
}

/** What loadGemmKernels gave in the last probe of each copy: an isa, null, or an error code. */
const gemmByProbe = new Map<string, string | null | undefined>();
/** What loadXnnGraphReader gave in the last probe of each copy: 'loaded' or null. */
const xnnGraphByProbe = new Map<string, string | null | undefined>();

const posix = { backend: 'posix', warnings: [] };
const heapWithWarning = { backend: 'heap', warnings: [HEAP_FALLBACK_WARNING] };

describe('addon loader', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  // The posix suites run on Linux whether or not the addon loads; this names the cause.
  it.runIf(process.platform === 'linux')('the addon loads on Linux (errors fail here)', () => {
    const addon = loadAddon();
    expect(addon.supported).toBe(true);
    expect(addon.externalBuffersAllowed()).toBe(true);
  });

  describe.each(['src', 'dist'] as const)('from %s', (from) => {
    it('says exactly what to run when there is no addon at all', async () => {
      const root = copyPackage(join(dir, from, 'unbuilt'));
      const forced = await probe(root, from, 'posix', dir);
      expect(forced.isMmapError).toBe(true);
      expect(forced.code).toBe('ERR_MMAP_ADDON_NOT_BUILT');
      expect(forced.message).toContain(PLATFORM_PACKAGE);
      expect(forced.message).toContain(`\`node ${join(root, 'scripts', 'build-addon.mjs')}\``);
      expect(forced.message).toContain(`\`${BUILD_COMMAND}\``);
      expect(BUILD_COMMAND).toBe('pnpm --filter @memlayer/mmap-native build:addon');
      expect(forced.warnings).toEqual([]);
      // Automatic selection falls back to the heap backend, which works, and says so once.
      expect(await probe(root, from, 'auto', dir, 3)).toEqual(heapWithWarning);
      // Asking for the heap backend is not a fallback: no warning.
      expect(await probe(root, from, 'heap', dir)).toEqual({ backend: 'heap', warnings: [] });
      // No addon, no GEMM kernels and no graph reader: null, not an error.
      expect(gemmByProbe.get(root)).toBeNull();
      expect(xnnGraphByProbe.get(root)).toBeNull();
    });

    it.runIf(process.platform === 'linux' && process.arch === 'x64')(
      "loads this platform's package first, and counts one that does not load as missing",
      async () => {
        // Installed and loading: used, even next to a broken source build (never loaded).
        const prebuilt = copyPackage(join(dir, from, 'prebuilt'), readFileSync(built));
        sourceBuild(prebuilt, 'not an ELF file');
        expect(await probe(prebuilt, from, 'auto', dir)).toEqual(posix);
        expect(await probe(prebuilt, from, 'posix', dir)).toEqual(posix);
        expect(gemmByProbe.get(prebuilt)).toBe(loadGemmKernels()?.isa);
        expect(xnnGraphByProbe.get(prebuilt)).toBe('loaded');
        // Hoisted beside the package, as npm installs both in node_modules/@memlayer/.
        const hoisted = copyPackage(
          join(dir, from, 'hoisted', 'node_modules', '@memlayer'),
          readFileSync(built),
          'beside',
        );
        expect(await probe(hoisted, from, 'posix', dir)).toEqual(posix);
        expect(gemmByProbe.get(hoisted)).toBe(loadGemmKernels()?.isa);
        // Installed but not loading (a system older than it needs), nothing else: heap.
        const broken = copyPackage(join(dir, from, 'broken-prebuilt'), 'not an ELF file');
        expect(await probe(broken, from, 'auto', dir)).toEqual(heapWithWarning);
        const forced = await probe(broken, from, 'posix', dir);
        expect(forced.code).toBe('ERR_MMAP_ADDON_NOT_BUILT');
        expect(forced.message).toContain('mmap_native.node did not load');
        // ... and with a source build beside it, that one is used.
        sourceBuild(broken, readFileSync(built));
        expect(await probe(broken, from, 'auto', dir)).toEqual(posix);
      },
    );

    it('rethrows load errors of a source build instead of hiding them', async () => {
      const root = copyPackage(join(dir, from, 'broken'));
      sourceBuild(root, 'not an ELF file');
      for (const choice of ['auto', 'posix']) {
        const result = await probe(root, from, choice, dir);
        expect(result.isMmapError).toBe(false);
        expect(result.code).toBe('ERR_DLOPEN_FAILED');
      }
      // The heap backend still works: it only borrows flock from the addon.
      expect(await probe(root, from, 'heap', dir)).toEqual({ backend: 'heap', warnings: [] });
      // A broken addon means no graph reader: module-loader then reads graphs in JavaScript.
      expect(xnnGraphByProbe.get(root)).toBeNull();
    });
  });

  it.runIf(process.platform === 'linux' && process.arch === 'x64')(
    'the addon that becomes the prebuilt one needs glibc 2.28 at most (what Node 20 needs)',
    () => {
      const symbols = execFileSync('objdump', ['-T', built]).toString();
      const versions = [...symbols.matchAll(/\bGLIBC_(\d+)\.(\d+)/g)].map(
        ([, major, minor]) => Number(major) * 1000 + Number(minor),
      );
      expect(versions.length).toBeGreaterThan(0);
      expect(Math.max(...versions)).toBeLessThanOrEqual(2028);
    },
  );
});

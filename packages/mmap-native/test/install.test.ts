// The install hook on copies of the package as npm unpacks it (dist/ compiled, sources,
// scripts): a fitting prebuild means no build at all; no prebuild and no compiler means
// one warning and exit 0. It must never fail a user's install.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageDir, runChild } from './helpers.js';

// Inside the package so that node-addon-api and node-gyp resolve from the copy as they
// would from an installed package's own node_modules.
const scratch = mkdtempSync(join(packageDir, '.test-tmp-install-'));

async function unpackedCopy(name: string): Promise<string> {
  const root = join(scratch, name);
  for (const entry of ['package.json', 'binding.gyp', 'src/native', 'scripts']) {
    cpSync(join(packageDir, entry), join(root, entry), { recursive: true });
  }
  const tsc = join(packageDir, '..', '..', 'node_modules', '.bin', 'tsc');
  const built = await runChild(tsc, ['-p', 'tsconfig.build.json', '--outDir', join(root, 'dist')]);
  expect(built.code, built.stdout + built.stderr).toBe(0);
  return root;
}

// No compiler: CC/CXX point at `false`, so the source build fails at the first compile.
const noCompiler = { ...process.env, CC: 'false', CXX: 'false' };

describe.runIf(process.platform === 'linux' && process.arch === 'x64')('install hook', () => {
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('the addon that becomes the prebuild needs glibc 2.28 at most (what Node 20 needs)', () => {
    const symbols = execFileSync('objdump', [
      '-T',
      join(packageDir, 'build', 'Release', 'mmap_native.node'),
    ]).toString();
    const versions = [...symbols.matchAll(/\bGLIBC_(\d+)\.(\d+)/g)].map(
      ([, major, minor]) => Number(major) * 1000 + Number(minor),
    );
    expect(versions.length).toBeGreaterThan(0);
    expect(Math.max(...versions)).toBeLessThanOrEqual(2028);
  });

  it('a fitting prebuild: nothing is built and nothing is printed', async () => {
    const root = await unpackedCopy('prebuilt');
    const folder = join(root, 'prebuilds', 'linux-x64');
    mkdirSync(folder, { recursive: true });
    cpSync(
      join(packageDir, 'build', 'Release', 'mmap_native.node'),
      join(folder, 'node.napi.glibc.node'),
    );
    const result = await runChild(process.execPath, [join(root, 'scripts', 'install.mjs')], {
      cwd: root,
      env: noCompiler,
    });
    expect(result.code).toBe(0);
    expect(result.stdout + result.stderr).toBe('');
    expect(existsSync(join(root, 'build'))).toBe(false);
  });

  it('no prebuild and no compiler: one warning that says what to run, exit 0', async () => {
    const root = await unpackedCopy('unbuilt');
    const result = await runChild(process.execPath, [join(root, 'scripts', 'install.mjs')], {
      cwd: root,
      env: noCompiler,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    const [warning] = lines;
    expect(warning).toMatch(/^@memlayer\/mmap-native: no prebuilt addon fits linux-x64 \(glibc\)/);
    expect(warning).toContain('the heap backend is used');
    expect(warning).toContain('`npm rebuild @memlayer/mmap-native`');
    expect(warning).toContain('`pnpm approve-builds`');
    expect(warning).toContain('`pnpm rebuild @memlayer/mmap-native`');
    const log = /Build log: (\S+)$/.exec(warning ?? '')?.[1];
    expect(log !== undefined && existsSync(log)).toBe(true);
    if (log !== undefined) rmSync(log, { force: true });
    expect(existsSync(join(root, 'build', 'Release', 'mmap_native.node'))).toBe(false);
  });
});

// The source build's tool check and its two modes: in the workspace (`--optional`) a machine
// without python3, make or g++ gets one warning and a build that goes on; a build asked for
// (`build:addon`, a consumer's source build) fails and names what to install.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { missingBuildTools } from '../scripts/build-tools.mjs';
import { makeTempDir, packageDir, runChild } from './helpers.js';

function binFolder(root: string, tools: string[]): string {
  const bin = join(root, tools.join('-') || 'empty');
  mkdirSync(bin, { recursive: true });
  for (const tool of tools) {
    writeFileSync(join(bin, tool), '#!/bin/sh\n');
    chmodSync(join(bin, tool), 0o755);
  }
  return bin;
}

describe.runIf(process.platform !== 'win32')('build tools', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const missing = (env: Record<string, string>) => missingBuildTools(env);

  it('looks python3 (or python), make and g++ up on PATH, or what PYTHON, MAKE, CXX name', () => {
    expect(missing({ PATH: binFolder(dir, ['python3', 'make', 'g++']) })).toEqual([]);
    expect(missing({ PATH: binFolder(dir, ['python', 'make', 'g++']) })).toEqual([]);
    const empty = binFolder(dir, []);
    expect(missing({ PATH: empty })).toEqual(['python3', 'make', 'g++']);
    const some = binFolder(dir, ['python3', 'gmake', 'clang++']);
    expect(missing({ PATH: some, MAKE: 'gmake', CXX: 'clang++ -O2' })).toEqual([]);
    expect(missing({ PATH: some, CXX: 'ccache g++' })).toEqual(['make', 'ccache (from CXX)']);
    expect(missing({ PATH: empty, PYTHON: join(some, 'python3') })).toEqual(['make', 'g++']);
  });

  const buildAddon = (args: string[]) =>
    runChild(process.execPath, [join(packageDir, 'scripts', 'build-addon.mjs'), ...args], {
      env: { PATH: binFolder(dir, []) },
    });

  it('--optional without the tools: one warning naming them, exit 0', async () => {
    const result = await buildAddon(['--optional']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('no python3, make, g++ on PATH');
    expect(lines[0]).toContain('apt-get install python3 make g++');
    expect(lines[0]).toContain('heap backend');
  });

  it('asked for without the tools: exit 1 with the same names', async () => {
    const result = await buildAddon([]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'mmap-native: cannot build the addon: no python3, make, g++ on PATH; ' +
        'Debian/Ubuntu: apt-get install python3 make g++.',
    );
  });
});

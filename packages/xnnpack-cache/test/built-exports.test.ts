// The build is what users import: every `exports` subpath of dist/ has the same exports as
// the sources, and each memlayer package loads as one bundled file (scripts/bundle-dist.mjs).
// Runs the built package in fresh processes (turbo builds before tests).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { probeBuildAndSources } from '../../../scripts/built-exports.mjs';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

test("each exports subpath of the build: the sources' exports, one file per package", () => {
  const { built, sources } = probeBuildAndSources(packageDir);
  expect(built.subpaths).toEqual(sources.subpaths);
  expect(built.files).toEqual([
    'cache-format/dist/index.js',
    'internal/dist/index.js',
    'mmap-native/dist/index.js',
    'xnnpack-cache/dist/index.js',
  ]);
}, 120_000);

// PACKAGE_VERSION reads ../package.json next to the module: the bundle sits where index.js was.
test("the build's PACKAGE_VERSION is its package.json's", () => {
  const child = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "import { PACKAGE_VERSION } from '@memlayer/xnnpack-cache'; console.log(PACKAGE_VERSION);",
    ],
    { cwd: packageDir, encoding: 'utf8', timeout: 110_000 },
  );
  expect(child.status, child.stderr).toBe(0);
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  expect(child.stdout.trim()).toBe(manifest.version);
}, 120_000);

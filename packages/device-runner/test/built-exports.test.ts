// The build is what users import: every `exports` subpath of dist/ has the same exports as
// the sources, and each memlayer package loads as one bundled file (scripts/bundle-dist.mjs).
// Runs the built package in fresh processes (turbo builds before tests).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const PROBE = fileURLToPath(new URL('../../../scripts/probe-exports.mjs', import.meta.url));

function probe(nodeFlags: string[]): { subpaths: Record<string, string[]>; files: string[] } {
  const child = spawnSync(process.execPath, [...nodeFlags, PROBE], {
    cwd: packageDir,
    encoding: 'utf8',
    timeout: 110_000,
  });
  expect(child.status, child.stderr).toBe(0);
  return JSON.parse(child.stdout.trim().split('\n').at(-1) as string);
}

test("each exports subpath of the build: the sources' exports, one file per package", () => {
  const built = probe([]);
  const sources = probe(['--conditions=memlayer-source', '--import', 'tsx']);
  expect(built.subpaths).toEqual(sources.subpaths);
  expect(built.files).toEqual([
    'device-runner/dist/bench/churn-section.js',
    'device-runner/dist/index.js',
    'internal/dist/index.js',
  ]);
}, 120_000);

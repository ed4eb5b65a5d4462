// The build is what users import: every `exports` subpath of dist/ has the same exports as
// the sources, and each memlayer package loads as one bundled file (scripts/bundle-dist.mjs).
// Runs the built package in fresh processes (turbo builds before tests).
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { probeBuildAndSources } from '../../../scripts/built-exports.mjs';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

test("each exports subpath of the build: the sources' exports, one file per package", () => {
  const { built, sources } = probeBuildAndSources(packageDir);
  expect(built.subpaths).toEqual(sources.subpaths);
  expect(built.files).toEqual(['internal/dist/index.js']);
}, 120_000);

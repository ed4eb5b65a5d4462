#!/usr/bin/env node
// The package's `install` hook. It must never fail the user's install:
// 1. a prebuild in prebuilds/<platform>-<arch>/ that loads → nothing to do;
// 2. otherwise build from source (scripts/build-addon.mjs, offline);
// 3. if that fails → one warning that says what happens now and what to run, exit 0.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

let prebuilds = null;
try {
  // Shipped in the tarball; absent in a fresh clone of the repository (no prebuilds there).
  prebuilds = await import('../dist/backends/posix/prebuilds.js');
} catch {
  // no dist: build from source
}
const platform = prebuilds?.platformLabel() ?? `${process.platform}-${process.arch}`;

function loadablePrebuild() {
  const findPrebuild = prebuilds?.findPrebuild;
  if (findPrebuild === undefined) return null;
  const path = findPrebuild(packageDir);
  if (path === null) return null;
  try {
    require(path);
    return path;
  } catch {
    return null; // e.g. built against a newer glibc than this system has: build instead
  }
}

function buildFromSource() {
  const result = spawnSync(process.execPath, [join(packageDir, 'scripts', 'build-addon.mjs')], {
    cwd: packageDir,
    encoding: 'utf8',
    env: process.env,
  });
  if (result.status === 0) return null;
  const log = join(tmpdir(), `mmap-native-build-${process.pid}.log`);
  try {
    writeFileSync(log, `${result.stdout ?? ''}\n${result.stderr ?? ''}\n${result.error ?? ''}`);
  } catch {
    return { log: null };
  }
  return { log };
}

try {
  if (loadablePrebuild() === null) {
    const failure = buildFromSource();
    if (failure !== null) {
      console.warn(
        `@memlayer/mmap-native: no prebuilt addon fits ${platform} and building it failed (it needs python3, make ` +
          'and a C++ compiler), so the heap backend is used: mappings are copies in memory. ' +
          'To build the addon later: npm users `npm rebuild @memlayer/mmap-native`; pnpm ' +
          'users `pnpm approve-builds` (or list it under allowBuilds in pnpm-workspace.yaml), ' +
          'then `pnpm rebuild @memlayer/mmap-native`.' +
          (failure.log === null ? '' : ` Build log: ${failure.log}`),
      );
    }
  }
} catch (error) {
  console.warn(`@memlayer/mmap-native: install step skipped (${error}); the heap backend is used.`);
}
process.exit(0);

#!/usr/bin/env node
// Builds the addon with node-gyp from source, offline.
// node-gyp downloads Node headers unless told where they are, and pnpm does not pass
// npm's `nodedir` setting through, so we point it at the running Node's own headers.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

function findNodeGyp() {
  try {
    return require.resolve('node-gyp/bin/node-gyp.js');
  } catch {
    // A consumer install without devDependencies: use the node-gyp that ships with npm.
    const npmGyp = join(
      dirname(process.execPath),
      '..',
      'lib',
      'node_modules',
      'npm',
      'node_modules',
      'node-gyp',
      'bin',
      'node-gyp.js',
    );
    if (existsSync(npmGyp)) return npmGyp;
    return null;
  }
}

function localNodeDir() {
  const prefix = join(dirname(process.execPath), '..');
  return existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? prefix : null;
}

const nodeGyp = findNodeGyp();
if (!nodeGyp) {
  console.error(
    'mmap-native: node-gyp not found; install it (npm i -g node-gyp) and run `pnpm --filter @memlayer/mmap-native build:addon`.',
  );
  process.exit(1);
}
const configured = existsSync(join(packageDir, 'build', 'config.gypi'));
const args = [nodeGyp, configured ? 'build' : 'rebuild'];
const nodeDir = process.env.npm_config_nodedir || localNodeDir();
if (nodeDir) args.push(`--nodedir=${nodeDir}`);
if (process.env.MEMLAYER_ADDON_DEBUG === '1') args.push('--debug');

// node-gyp and make narrate every step; their output is shown only when the build fails
// (or with MEMLAYER_ADDON_VERBOSE=1), so a first install or test run stays quiet.
const verbose = process.env.MEMLAYER_ADDON_VERBOSE === '1';
const result = spawnSync(process.execPath, args, {
  cwd: packageDir,
  stdio: verbose ? 'inherit' : ['ignore', 'pipe', 'pipe'],
  maxBuffer: 64 * 1024 * 1024,
});
if (result.status !== 0) {
  if (!verbose) {
    process.stderr.write(result.stdout ?? '');
    process.stderr.write(result.stderr ?? '');
  }
  console.error(
    `mmap-native: building the addon failed (node-gyp exit ${result.status}). ` +
      'It needs python3, make and a C++ compiler; the heap backend still works with MEMLAYER_MMAP_BACKEND=heap.',
  );
  process.exit(result.status ?? 1);
}

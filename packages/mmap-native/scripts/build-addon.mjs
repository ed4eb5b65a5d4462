#!/usr/bin/env node
// Builds the addon from source with node-gyp, offline, into addon/build/Release.
// Usage: node scripts/build-addon.mjs [--optional]
// --optional (the workspace's `build`): without python3, make or a C++ compiler, print one
// warning and exit 0, so the packages run on the heap backend; a build that starts and
// fails is still an error. Without it (`build:addon`, a consumer's source build on
// request) a missing tool is an error.
// node-gyp downloads Node headers unless told where they are, and pnpm does not pass
// npm's `nodedir` setting through, so we point it at the running Node's own headers.
// binding.gyp lives in addon/, not at the package root: npm and pnpm treat a root
// binding.gyp as an install script (npm runs `node-gyp rebuild`, pnpm asks for approval).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installHint, missingBuildTools } from './build-tools.mjs';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const addonDir = join(packageDir, 'addon');
const optional = process.argv.includes('--optional');
const require = createRequire(import.meta.url);
const BUILD_COMMAND = 'pnpm --filter @memlayer/mmap-native build:addon';

function findNodeGyp() {
  try {
    return require.resolve('node-gyp/bin/node-gyp.js');
  } catch {
    // An installed package has no devDependencies: use the node-gyp that ships with npm.
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
    return existsSync(npmGyp) ? npmGyp : null;
  }
}

function localNodeDir() {
  const prefix = join(dirname(process.execPath), '..');
  return existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? prefix : null;
}

function giveUp(reason) {
  if (optional) {
    console.warn(
      `mmap-native: addon not built (${reason}); the packages use the heap backend ` +
        `(mappings are copies in memory). To build it, install them and run \`${BUILD_COMMAND}\`.`,
    );
    process.exit(0);
  }
  console.error(`mmap-native: cannot build the addon: ${reason}.`);
  process.exit(1);
}

const missing = missingBuildTools();
if (missing.length > 0) {
  giveUp(`no ${missing.join(', ')} on PATH; Debian/Ubuntu: ${installHint(missing)}`);
}
const nodeGyp = findNodeGyp();
if (!nodeGyp) giveUp('node-gyp not found; `npm i -g node-gyp` installs it');

const configured = existsSync(join(addonDir, 'build', 'config.gypi'));
const args = [nodeGyp, configured ? 'build' : 'rebuild'];
const nodeDir = process.env.npm_config_nodedir || localNodeDir();
if (nodeDir) args.push(`--nodedir=${nodeDir}`);
if (process.env.MEMLAYER_ADDON_DEBUG === '1') args.push('--debug');

// node-gyp and make narrate every step; their output is shown only when the build fails
// (or with MEMLAYER_ADDON_VERBOSE=1), so a first build or test run stays quiet.
const verbose = process.env.MEMLAYER_ADDON_VERBOSE === '1';
const result = spawnSync(process.execPath, args, {
  cwd: addonDir,
  stdio: verbose ? 'inherit' : ['ignore', 'pipe', 'pipe'],
  maxBuffer: 64 * 1024 * 1024,
});
if (result.status !== 0) {
  if (!verbose) {
    process.stderr.write(result.stdout ?? '');
    process.stderr.write(result.stderr ?? '');
  }
  console.error(`mmap-native: building the addon failed (node-gyp exit ${result.status}).`);
  process.exit(result.status ?? 1);
}

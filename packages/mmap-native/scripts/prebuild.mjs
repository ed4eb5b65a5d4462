#!/usr/bin/env node
// `prepack` (after tsc has built dist/): builds the addon from source, offline, like the
// install does, and puts the addon into prebuilds/<platform>-<arch>/node.napi.<libc>.node, the name
// prebuildify gives a Node-API build, so installs on this platform need no compiler.
// `postpack` removes prebuilds/ again so the source build stays the one used here.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (args) => execFileSync(process.execPath, args, { cwd: packageDir, stdio: 'inherit' });

run([join(packageDir, 'scripts', 'build-addon.mjs')]);

const { prebuildFileName, prebuildFolder } = await import('../dist/backends/posix/prebuilds.js');
const folder = prebuildFolder(packageDir);
const target = join(folder, prebuildFileName());
mkdirSync(folder, { recursive: true });
copyFileSync(join(packageDir, 'build', 'Release', 'mmap_native.node'), target);
// Debug symbols are most of the file; the source build keeps them for valgrind.
if (spawnSync('strip', ['--strip-unneeded', target]).status !== 0) {
  console.warn('prebuild: strip not available, shipping the unstripped addon');
}
// A prebuild that does not load would be worse than none.
run(['-e', `require(${JSON.stringify(target)})`]);
console.log(`prebuild: ${target}`);

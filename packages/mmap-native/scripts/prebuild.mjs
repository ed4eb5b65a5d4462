#!/usr/bin/env node
// `prepack` of a per-platform package (packages/mmap-native-<platform>, run in its folder):
// builds the addon from source, offline, and copies it stripped into that folder as
// mmap_native.node, its `main`. Refuses to pack for another platform than this one (no
// cross-build) and a binary that needs a newer glibc than Node 20 does (2.28), and checks
// that the copy loads. The package's `postpack` removes the copy again.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const targetDir = process.cwd();
const manifest = JSON.parse(readFileSync(join(targetDir, 'package.json'), 'utf8'));
const run = (args) => execFileSync(process.execPath, args, { cwd: packageDir, stdio: 'inherit' });
const fail = (message) => {
  console.error(`prebuild ${manifest.name}: ${message}`);
  process.exit(1);
};

// The loader's test (src/backends/posix/platform-package.ts), without needing dist/ here.
const libc =
  process.platform !== 'linux' ? null : existsSync('/etc/alpine-release') ? 'musl' : 'glibc';
const here = { os: process.platform, cpu: process.arch, libc };
for (const [field, value] of Object.entries(here)) {
  const wanted = manifest[field];
  if (wanted !== undefined && !wanted.includes(value)) {
    fail(
      `built on ${here.os}-${here.cpu} (${here.libc}), but the package is for ${field} ${wanted}`,
    );
  }
}

run([join(packageDir, 'scripts', 'build-addon.mjs')]);
const target = join(targetDir, 'mmap_native.node');
copyFileSync(join(packageDir, 'addon', 'build', 'Release', 'mmap_native.node'), target);
// Debug symbols are most of the file; the source build keeps them for valgrind.
if (spawnSync('strip', ['--strip-unneeded', target]).status !== 0) {
  console.warn('prebuild: strip not available, shipping the unstripped addon');
}
if (here.libc === 'glibc') {
  const symbols = execFileSync('objdump', ['-T', target], { encoding: 'utf8' });
  const newest = Math.max(
    ...[...symbols.matchAll(/\bGLIBC_(\d+)\.(\d+)/g)].map(
      ([, a, b]) => Number(a) * 1000 + Number(b),
    ),
  );
  if (newest > 2028) fail(`the addon needs glibc ${Math.floor(newest / 1000)}.${newest % 1000}`);
}
// A prebuilt addon that does not load would be worse than none.
run(['-e', `require(${JSON.stringify(target)})`]);
console.log(`prebuild: ${target}`);

// The per-platform package that carries the prebuilt addon, named the way napi-rs names
// them: @memlayer/mmap-native-<platform>-<arch>[-gnu|-musl]. It is an optional dependency
// of this package, installed by npm and pnpm only where its os/cpu/libc fields match.

import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { nodeFs } from '../../node-builtins.js';

/** The C library a Linux process runs on; node-gyp-build's test (Alpine means musl). */
export function currentLibc(): 'glibc' | 'musl' | null {
  if (process.platform !== 'linux') return null;
  const forced = process.env['LIBC'];
  if (forced === 'glibc' || forced === 'musl') return forced;
  return nodeFs().existsSync('/etc/alpine-release') ? 'musl' : 'glibc';
}

/** "linux-x64 (glibc)": what a prebuilt addon has to match, for messages. */
export function platformLabel(): string {
  const libc = currentLibc();
  return `${process.platform}-${process.arch}${libc === null ? '' : ` (${libc})`}`;
}

/** "@memlayer/mmap-native-linux-x64-gnu" here. */
export function platformPackageName(): string {
  const libc = currentLibc();
  const suffix = libc === 'glibc' ? '-gnu' : libc === 'musl' ? '-musl' : '';
  return `@memlayer/mmap-native-${process.platform}-${process.arch}${suffix}`;
}

/** The file a per-platform package ships (its `main`). */
export const PLATFORM_ADDON_FILE = 'mmap_native.node';

/**
 * The addon file of this platform's package for this package installed at `root` (its
 * real path), or null when the package is not installed or holds no addon (in the
 * repository it is empty until packed). The folders npm, pnpm and yarn put an optional
 * dependency in are looked at first: resolving through Node's resolver costs 1-2 ms of its
 * own cold code in a fresh process, and it is asked only when neither folder holds the
 * package (another layout).
 */
export function findPlatformAddon(root: string): string | null {
  const name = platformPackageName();
  const fs = nodeFs();
  const beside = dirname(root);
  const places = [join(root, 'node_modules', name)];
  // Beside this package in its scope's folder: node_modules/@memlayer/ (npm's hoisting, and
  // pnpm's store, where a package's dependencies are linked beside it).
  const [scope, bare] = name.split('/') as [string, string];
  if (basename(beside) === scope) places.push(join(beside, bare));
  let folder = places.find((place) => fs.existsSync(join(place, 'package.json')));
  if (folder === undefined) {
    try {
      folder = dirname(createRequire(join(root, 'package.json')).resolve(`${name}/package.json`));
    } catch {
      return null;
    }
  }
  const path = join(folder, PLATFORM_ADDON_FILE);
  return fs.existsSync(path) ? path : null;
}

// The per-platform package that carries the prebuilt addon, named the way napi-rs names
// them: @memlayer/mmap-native-<platform>-<arch>[-gnu|-musl]. It is an optional dependency
// of this package, installed by npm and pnpm only where its os/cpu/libc fields match.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
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
 * The addon file of this platform's package as resolved from `from` (a file of this
 * package), or null when the package is not installed or holds no addon (in the
 * repository it is empty until packed).
 */
export function findPlatformAddon(from: string): string | null {
  let manifest: string;
  try {
    manifest = createRequire(from).resolve(`${platformPackageName()}/package.json`);
  } catch {
    return null;
  }
  const path = join(dirname(manifest), PLATFORM_ADDON_FILE);
  return nodeFs().existsSync(path) ? path : null;
}

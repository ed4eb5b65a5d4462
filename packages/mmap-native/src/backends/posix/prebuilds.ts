// Prebuilt addons shipped in the package: prebuilds/<platform>-<arch>/<tags>.node, named
// the way prebuildify / node-gyp-build name them ("node.napi.glibc.node": Node-API, so
// one binary serves every Node version with that Node-API level; glibc, not musl).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** The C library a Linux process runs on; node-gyp-build's test (Alpine means musl). */
export function currentLibc(): 'glibc' | 'musl' | null {
  if (process.platform !== 'linux') return null;
  const forced = process.env['LIBC'];
  if (forced === 'glibc' || forced === 'musl') return forced;
  return existsSync('/etc/alpine-release') ? 'musl' : 'glibc';
}

/** "linux-x64 (glibc)": what a prebuild has to match, for messages. */
export function platformLabel(): string {
  const libc = currentLibc();
  return `${process.platform}-${process.arch}${libc === null ? '' : ` (${libc})`}`;
}

/** The folder prebuilds for this platform and architecture live in. */
export function prebuildFolder(packageRoot: string): string {
  return join(packageRoot, 'prebuilds', `${process.platform}-${process.arch}`);
}

/** The file name the prebuild for this platform gets ("node.napi.glibc.node" here). */
export function prebuildFileName(): string {
  const libc = currentLibc();
  return libc === null ? 'node.napi.node' : `node.napi.${libc}.node`;
}

/**
 * The prebuild that fits this process, or null. Only Node-API builds are accepted, and
 * a libc tag, when present, must match.
 */
export function findPrebuild(packageRoot: string): string | null {
  const folder = prebuildFolder(packageRoot);
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return null;
  }
  const libc = currentLibc();
  for (const name of names.sort()) {
    const tags = name.split('.');
    if (tags.pop() !== 'node' || !tags.includes('napi')) continue;
    const fileLibc = tags.find((tag) => tag === 'glibc' || tag === 'musl');
    if (fileLibc !== undefined && fileLibc !== libc) continue;
    return join(folder, name);
  }
  return null;
}

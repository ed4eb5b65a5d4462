// Loader of the addon: the prebuilt one of this platform's package first, then a source
// build of this package (addon/build/Release, addon/build/Debug). "Found nowhere" becomes
// an error that says what to run; a source build that fails to load (broken binary,
// missing symbol) is rethrown as is, a prebuilt one that fails counts as missing.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MmapError } from '../../errors.js';
import { nodeFs } from '../../node-builtins.js';
import { findPlatformAddon, platformLabel, platformPackageName } from './platform-package.js';

/** The native File object (src/native/objects/file.cc). */
export interface NativeFile {
  readonly fd: number;
  size(): number | bigint;
  grow(newSize: number | bigint, sparse: boolean): number | bigint;
  truncate(newSize: number | bigint): number | bigint;
  map(offset: number | bigint, length: number, writable: boolean, maxLength: number): NativeMapping;
  sync(dataOnly: boolean): void;
  syncAsync(dataOnly: boolean): Promise<void>;
  lock(kind: number, wait: boolean): void;
  stat(): {
    dev: number | bigint;
    ino: number | bigint;
    size: number | bigint;
    mode: number;
    uid: number;
    gid: number;
    mtimeNs: bigint;
  };
  readInto(target: Uint8Array, position: number | bigint): number;
  write(source: Uint8Array, position: number | bigint): void;
  /** pwrite on the thread pool (src/native/objects/background-write.cc). */
  writeInBackground(
    sources: readonly Uint8Array[],
    positions: readonly (number | bigint)[],
    syncBefore: readonly boolean[],
    syncAfter: boolean,
    releaseLock: boolean,
    startWriteback: boolean,
  ): NativeBackgroundWrite;
  close(): void;
}

/** The handle writeInBackground returns (src/native/objects/background-write.cc). */
export interface NativeBackgroundWrite {
  readonly done: boolean;
  wait(): void;
}

/** The native Mapping object (src/native/objects/mapping.cc). */
export interface NativeMapping {
  readonly buffer: ArrayBuffer;
  readonly address: bigint | null;
  sync(offset: number, length: number, mode: number): void;
  advise(offset: number, length: number, advice: number): void;
  residency(
    offset: number,
    length: number,
    pages: boolean,
  ): { resident: number; total: number; pages?: Uint8Array };
  unmap(): void;
}

export interface NativeAddon {
  configure(errorConstructor: typeof MmapError): void;
  readonly supported: boolean;
  File: new (
    path: string,
    mode: number,
    permissions: number,
    followSymlinks: boolean,
  ) => NativeFile;
  /** Mappings made by the addon and not yet unmapped, across all threads. */
  liveMappings(): number;
  pageSize(): number;
  lockDescriptor(fd: number, kind: number, wait: boolean, path: string): void;
  externalBuffersAllowed(): boolean;
  /** The pages of `buffer` faulted in writable on the thread pool (src/native/posix/prefault.cc). */
  prefault(buffer: ArrayBuffer): Promise<boolean>;
  /** CRC32C (src/native/util/crc32c.cc); absent from addons built before it existed. */
  crc32c?(bytes: Uint8Array, previous: number): number;
  crc32cImplementation?(): 'sse4.2' | 'table';
}

/** Builds the addon inside this repository. */
export const BUILD_COMMAND = 'pnpm --filter @memlayer/mmap-native build:addon';
const PACKAGE_NAME = '@memlayer/mmap-native';

// Works from src/backends/posix/ (tests, tsx) and from the bundle dist/index.js alike: walk
// up to our own package.json.
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (nodeFs().existsSync(manifest)) {
      try {
        if (JSON.parse(nodeFs().readFileSync(manifest, 'utf8')).name === PACKAGE_NAME) return dir;
      } catch {
        // an unreadable manifest is not ours; keep walking up
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`${PACKAGE_NAME}: cannot find its package.json`);
    dir = parent;
  }
}

/**
 * The command that builds the addon of this installed package from source (python3, make
 * and a C++ compiler; offline), with the package's real path: it works for npm and pnpm
 * layouts alike, and for a package installed as a dependency of a dependency.
 */
export function sourceBuildCommand(): string {
  return `node ${join(packageRoot(), 'scripts', 'build-addon.mjs')}`;
}

/** Source builds of the package at `root`. */
function localBuilds(root: string): string[] {
  return ['Release', 'Debug'].map((type) => join(root, 'addon', 'build', type, 'mmap_native.node'));
}

/**
 * Where the addon is looked for, in order: the prebuilt addon of this platform's package,
 * then source builds (Debug only exists for MEMLAYER_ADDON_DEBUG=1 builds).
 */
export function addonCandidates(): string[] {
  const root = packageRoot();
  const prebuilt = findPlatformAddon(root);
  return [prebuilt ?? `${platformPackageName()}/mmap_native.node (absent)`, ...localBuilds(root)];
}

let cached: NativeAddon | null | undefined;
let prebuildFailure: string | undefined;

/** Why this platform's prebuilt addon did not load (then it counts as missing), if it did not. */
export function prebuildLoadFailure(): string | undefined {
  return prebuildFailure;
}

/**
 * The addon in the file at `path`, through process.dlopen as `require` loads a .node file:
 * without the module loader's resolution, which costs ~1 ms of cold code in a fresh process.
 */
function openAddonFile(path: string): NativeAddon {
  const module = { exports: {} };
  process.dlopen(module, path);
  return module.exports as NativeAddon;
}

function loadPrebuilt(root: string): NativeAddon | null {
  const path = findPlatformAddon(root);
  if (path === null) return null;
  try {
    return openAddonFile(path);
  } catch (error) {
    // e.g. a system with an older glibc than the prebuilt addon needs: a source build may
    // still work, and the heap backend does.
    prebuildFailure = `${path} did not load: ${(error as Error).message}`;
    return null;
  }
}

/**
 * The addon, or null when neither this platform's package nor a source build has one
 * that loads. A source build that fails to load is thrown: it is broken and should be
 * rebuilt.
 */
export function tryLoadAddon(): NativeAddon | null {
  if (cached !== undefined) return cached;
  // Found once: each walk up to package.json reads and parses it.
  const root = packageRoot();
  let addon = loadPrebuilt(root);
  if (addon === null) {
    const local = localBuilds(root).find((candidate) => nodeFs().existsSync(candidate));
    if (local !== undefined) addon = openAddonFile(local);
  }
  addon?.configure(MmapError);
  cached = addon;
  return addon;
}

/** The addon if it was already loaded, without trying to load it. */
export function loadedAddon(): NativeAddon | null {
  return cached ?? null;
}

/** What the heap-fallback warning and ERR_MMAP_ADDON_NOT_BUILT say: why, and what to run. */
export function missingAddonAdvice(): string {
  return (
    `no native addon for ${platformLabel()}: neither ${platformPackageName()} (its optional ` +
    `dependency) nor a source build is there` +
    `${prebuildFailure === undefined ? '' : ` that loads (${prebuildFailure})`}. Build it ` +
    `from source (needs python3, make and a C++ compiler) with \`${sourceBuildCommand()}\`; ` +
    `inside the memlayer repository \`${BUILD_COMMAND}\``
  );
}

/** The addon, or an MmapError (code ERR_MMAP_ADDON_NOT_BUILT) that says what to run. */
export function loadAddon(): NativeAddon {
  const addon = tryLoadAddon();
  if (addon !== null) return addon;
  throw new MmapError(
    `${missingAddonAdvice()}. Looked for ${addonCandidates().join(', ')}. ` +
      "Or use the heap backend: { backend: 'heap' } or MEMLAYER_MMAP_BACKEND=heap.",
    { code: 'ERR_MMAP_ADDON_NOT_BUILT' },
  );
}

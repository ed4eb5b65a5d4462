// Loader of the addon: a local build (build/Release, build/Debug) first, so a source build
// always wins, then the prebuild shipped in the package. "Found nowhere" becomes an error
// that says what to run; every other load failure (broken binary, missing symbol) is
// rethrown as is.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MmapError } from '../../errors.js';
import { findPrebuild, platformLabel, prebuildFolder } from './prebuilds.js';

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
}

/** Rebuilds the addon inside this repository. */
export const BUILD_COMMAND = 'pnpm --filter @memlayer/mmap-native build:addon';
/** Rebuilds the addon of an installed package (npm; pnpm also needs the build approved). */
export const REBUILD_COMMANDS = {
  npm: 'npm rebuild @memlayer/mmap-native',
  pnpm: 'pnpm approve-builds (or allowBuilds in pnpm-workspace.yaml), then pnpm rebuild @memlayer/mmap-native',
} as const;
const PACKAGE_NAME = '@memlayer/mmap-native';

// Works from src/ (tests, tsx) and from dist/ alike: walk up to our own package.json.
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if (JSON.parse(readFileSync(manifest, 'utf8')).name === PACKAGE_NAME) return dir;
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
 * Where the addon is looked for, in order: local builds (Debug only exists for
 * MEMLAYER_ADDON_DEBUG=1 builds), then the prebuild folder of this platform.
 */
export function addonCandidates(): string[] {
  const root = packageRoot();
  return [
    ...['Release', 'Debug'].map((type) => join(root, 'build', type, 'mmap_native.node')),
    findPrebuild(root) ?? prebuildFolder(root),
  ];
}

function findAddon(): { path: string; prebuilt: boolean } | undefined {
  const root = packageRoot();
  const local = ['Release', 'Debug']
    .map((type) => join(root, 'build', type, 'mmap_native.node'))
    .find((candidate) => existsSync(candidate));
  if (local !== undefined) return { path: local, prebuilt: false };
  const prebuild = findPrebuild(root);
  return prebuild === null ? undefined : { path: prebuild, prebuilt: true };
}

let cached: NativeAddon | null | undefined;
let prebuildFailure: string | undefined;

/** Why the shipped prebuild did not load (then it counts as missing), if it did not. */
export function prebuildLoadFailure(): string | undefined {
  return prebuildFailure;
}

/**
 * The addon, or null when there is neither a local build nor a prebuild that loads.
 * A local build that fails to load is thrown: it is broken and should be rebuilt. A
 * prebuild that fails to load (a system older than it needs) counts as missing.
 */
export function tryLoadAddon(): NativeAddon | null {
  if (cached !== undefined) return cached;
  const found = findAddon();
  if (found === undefined) {
    cached = null;
    return null;
  }
  let addon: NativeAddon;
  try {
    addon = createRequire(import.meta.url)(found.path) as NativeAddon;
  } catch (error) {
    if (!found.prebuilt) throw error;
    prebuildFailure = `the prebuild ${found.path} did not load: ${(error as Error).message}`;
    cached = null;
    return null;
  }
  addon.configure(MmapError);
  cached = addon;
  return addon;
}

/** The addon if it was already loaded, without trying to load it. */
export function loadedAddon(): NativeAddon | null {
  return cached ?? null;
}

/** The addon, or an MmapError (code ERR_MMAP_ADDON_NOT_BUILT) that says what to run. */
export function loadAddon(): NativeAddon {
  const addon = tryLoadAddon();
  if (addon !== null) return addon;
  throw new MmapError(
    `The mmap-native addon is not built and no prebuild fits ${platformLabel()} ` +
      `(looked for ${addonCandidates().join(', ')}` +
      `${prebuildFailure === undefined ? '' : `; ${prebuildFailure}`}). Build it (needs python3, make and a C++ ` +
      `compiler) with \`${REBUILD_COMMANDS.npm}\`, with pnpm: ${REBUILD_COMMANDS.pnpm}; ` +
      `inside the memlayer repository run \`${BUILD_COMMAND}\`. ` +
      "Or use the heap backend: { backend: 'heap' } or MEMLAYER_MMAP_BACKEND=heap.",
    { code: 'ERR_MMAP_ADDON_NOT_BUILT' },
  );
}

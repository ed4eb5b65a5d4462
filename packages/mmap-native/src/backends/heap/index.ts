// The heap backend: pure JavaScript over node:fs, for Windows, runtimes without external
// ArrayBuffers (Electron's V8 memory cage), or when forced for tests. Same API; a mapping
// is a private copy that sync() writes back. Differences are listed in the README.

import type { Backend } from '../../backend.js';
import { maxBufferLength } from '../../node-builtins.js';
import type { NativeAddon } from '../posix/addon.js';
import { HeapFile } from './file.js';
import { liveHeapMappings } from './mapping.js';

// Used for page arithmetic when the addon cannot tell the real page size.
const FALLBACK_PAGE_SIZE = 4096;

export function createHeapBackend(addon: NativeAddon | null): Backend {
  const pageSize = addon?.supported ? addon.pageSize() : FALLBACK_PAGE_SIZE;
  return {
    name: 'heap',
    maxMappingLength: maxBufferLength(),
    pageSize: () => pageSize,
    open: (path, mode, permissions, options) =>
      new HeapFile(path, mode, permissions, pageSize, addon, options?.followSymlinks ?? true),
    liveMappings: liveHeapMappings,
  };
}

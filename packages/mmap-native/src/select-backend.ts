// Backend choice: the `backend` option, else MEMLAYER_MMAP_BACKEND, else automatic
// (posix on Linux/macOS when the addon loads and external ArrayBuffers are allowed).
import type { Backend, BackendName } from './backend.js';
import { createHeapBackend } from './backends/heap/index.js';
import { loadAddon, missingAddonAdvice, tryLoadAddon } from './backends/posix/addon.js';
import { createPosixBackend } from './backends/posix/index.js';
import { MmapError } from './errors.js';
import { expectOneOf } from './validate.js';

export type BackendChoice = BackendName | 'auto';
const CHOICES: readonly BackendChoice[] = ['auto', 'posix', 'heap'];
export const BACKEND_ENV = 'MEMLAYER_MMAP_BACKEND';

let posix: Backend | undefined;
let heap: Backend | undefined;

function heapBackend(): Backend {
  heap ??= createHeapBackend(process.platform === 'win32' ? null : tryLoadAddonQuietly());
  return heap;
}

// The heap backend only borrows flock and the page size from the addon: a broken addon
// must not take it down as well.
function tryLoadAddonQuietly() {
  try {
    return tryLoadAddon();
  } catch {
    return null;
  }
}

function posixBackend(): Backend {
  if (posix) return posix;
  const addon = loadAddon();
  if (!addon.supported) {
    throw new MmapError(`the posix backend is not available on ${process.platform}`, {
      code: 'ERR_MMAP_UNSUPPORTED_PLATFORM',
    });
  }
  if (!addon.externalBuffersAllowed()) {
    throw new MmapError('this runtime does not allow external ArrayBuffers', {
      code: 'ERR_MMAP_EXTERNAL_BUFFERS_NOT_ALLOWED',
    });
  }
  posix = createPosixBackend(addon);
  return posix;
}

/** process.emitWarning code of the one-time "no addon, using the heap backend" warning. */
export const HEAP_FALLBACK_WARNING = 'MEMLAYER_MMAP_HEAP_FALLBACK';
let warned = false;

// Once per process: the heap backend works, but copies instead of mapping, which a user
// who installed this package for real mmap should hear about.
function warnHeapFallback(): void {
  if (warned) return;
  warned = true;
  process.emitWarning(
    `@memlayer/mmap-native: ${missingAddonAdvice()}. Until then the heap backend is used ` +
      `(mappings are copies in memory); choose { backend: 'heap' } / ${BACKEND_ENV}=heap to ` +
      'silence this.',
    { code: HEAP_FALLBACK_WARNING },
  );
}

function automatic(): Backend {
  if (process.platform === 'win32') return heapBackend();
  // Missing addon → heap, with a warning; an addon that exists but fails to load is
  // rethrown. Runtimes that forbid external buffers (Electron) get the heap silently:
  // nothing the user can build changes that.
  const addon = tryLoadAddon();
  if (addon === null) {
    warnHeapFallback();
    return heapBackend();
  }
  if (!addon.supported || !addon.externalBuffersAllowed()) return heapBackend();
  return posixBackend();
}

/** The backend for a choice (default: the option, then MEMLAYER_MMAP_BACKEND, then auto). */
export function getBackend(choice?: BackendChoice): Backend {
  const fromEnv = process.env[BACKEND_ENV];
  const resolved =
    choice !== undefined
      ? expectOneOf(choice, 'backend', CHOICES)
      : fromEnv !== undefined && fromEnv !== ''
        ? expectOneOf(fromEnv, BACKEND_ENV, CHOICES)
        : 'auto';
  if (resolved === 'heap') return heapBackend();
  if (resolved === 'posix') return posixBackend();
  return automatic();
}

import { tryLoadAddon } from './backends/posix/addon.js';
import { expectArrayBuffer, expectObject, expectOneOf } from './validate.js';

/** How prefault faults pages in: readable only, or writable. */
export const PREFAULT_ACCESSES = ['read', 'write'] as const;
export type PrefaultAccess = (typeof PREFAULT_ACCESSES)[number];

export interface PrefaultOptions {
  /**
   * 'write' (default): fresh memory about to be written (Linux `MADV_POPULATE_WRITE`).
   * 'read': memory about to be read, e.g. a read-only mapping of a file whose pages are in
   * the page cache (`MADV_POPULATE_READ`).
   */
  access?: PrefaultAccess | undefined;
}

/**
 * Faults every whole page inside `buffer` in on a thread-pool thread (Linux 5.14+
 * `MADV_POPULATE_WRITE`, or `MADV_POPULATE_READ` with `{ access: 'read' }`), without
 * changing a byte. A page costs a page fault on its first touch; started ahead of use,
 * this moves that cost off the calling thread, which may read or write the buffer
 * meanwhile. Resolves true when done; false when nothing was done: no whole page, no addon,
 * not Linux 5.14+, or the kernel refused (it is advice, not an error). The buffer is kept
 * alive until the promise settles.
 */
export function prefault(buffer: ArrayBuffer, options?: PrefaultOptions): Promise<boolean> {
  expectArrayBuffer(buffer, 'buffer');
  const settings = expectObject(options, 'options');
  const access =
    settings['access'] === undefined
      ? 'write'
      : expectOneOf(settings['access'], 'options.access', PREFAULT_ACCESSES);
  const addon = addonQuietly();
  if (addon === null || !addon.supported) return Promise.resolve(false);
  if (access === 'write') return addon.prefault(buffer);
  // An addon built before read access existed has no prefaultRead.
  return addon.prefaultRead?.(buffer) ?? Promise.resolve(false);
}

// Advice never fails a caller: an addon that cannot load only means no prefault.
function addonQuietly() {
  if (process.platform !== 'linux') return null;
  try {
    return tryLoadAddon();
  } catch {
    return null;
  }
}

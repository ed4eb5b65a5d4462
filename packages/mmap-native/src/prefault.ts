import { tryLoadAddon } from './backends/posix/addon.js';
import { expectArrayBuffer } from './validate.js';

/**
 * Faults every whole page inside `buffer` in writable on a thread-pool thread (Linux 5.14+
 * `MADV_POPULATE_WRITE`), without changing a byte. A fresh page costs a page fault on its
 * first write; started ahead of writes, this moves that cost off the calling thread, which
 * may write the buffer meanwhile. Resolves true when done; false when nothing was done: no
 * whole page, no addon, not Linux 5.14+, or the kernel refused (it is advice, not an error).
 * The buffer is kept alive until the promise settles.
 */
export function prefault(buffer: ArrayBuffer): Promise<boolean> {
  expectArrayBuffer(buffer, 'buffer');
  const addon = addonQuietly();
  if (addon === null || !addon.supported) return Promise.resolve(false);
  return addon.prefault(buffer);
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

// prefault(buffer): pages faulted in writable on the thread pool, bytes never changed.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { pageSize, prefault } from '../src/index.js';
import { errorOf } from './helpers.js';

/** Resident bytes of this process (/proc/self/statm, field 2, in pages). */
function residentBytes(): number {
  const fields = readFileSync('/proc/self/statm', 'utf8').split(' ');
  return Number(fields[1]) * pageSize();
}

const MiB = 1024 * 1024;

describe('prefault', () => {
  it('makes a fresh buffer resident without writing it (Linux 5.14+)', async () => {
    const buffer = new ArrayBuffer(64 * MiB);
    const before = residentBytes();
    const done = await prefault(buffer);
    const grown = residentBytes() - before;
    if (process.platform === 'linux') {
      expect(done).toBe(true);
      // Nothing here wrote the buffer: only the prefault can have made its pages resident.
      expect(grown).toBeGreaterThan(48 * MiB);
    } else {
      expect(done).toBe(false);
    }
    expect(new Uint8Array(buffer).every((byte) => byte === 0)).toBe(true);
  });

  it('keeps every byte written before and while it runs', async () => {
    const buffer = new ArrayBuffer(32 * MiB + 123);
    const bytes = new Uint8Array(buffer);
    for (let i = 0; i < 4096; i++) bytes[i] = (i * 7) & 0xff;
    const pending = prefault(buffer);
    // Written on this thread while the thread pool faults the same pages in.
    for (let i = 4096; i < bytes.length; i++) bytes[i] = (i * 7) & 0xff;
    await pending;
    let wrong = 0;
    for (let i = 0; i < bytes.length; i++) if (bytes[i] !== ((i * 7) & 0xff)) wrong++;
    expect(wrong).toBe(0);
  });

  it('does nothing for a buffer without a whole page', async () => {
    expect(await prefault(new ArrayBuffer(0))).toBe(false);
    expect(await prefault(new ArrayBuffer(100))).toBe(false);
  });

  it('refuses what is not an ArrayBuffer', () => {
    for (const value of [new Uint8Array(8), new SharedArrayBuffer(8), null, 'buffer']) {
      const error = errorOf(() => prefault(value as unknown as ArrayBuffer));
      expect(error).toBeInstanceOf(TypeError);
      expect(error?.code).toBe('ERR_INVALID_ARG_TYPE');
    }
  });
});

// prefault(buffer, { access: 'read' }): a read-only mapping's page tables filled on the
// thread pool, so reading its pages afterwards takes (almost) no page faults.
import { closeSync, openSync, writeSync } from 'node:fs';
import { release } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Mapping, openMappedFile, pageSize, prefault } from '../src/index.js';
import { errorOf, makeTempDir } from './helpers.js';

const MiB = 1024 * 1024;
const FILL = 0x5a;

/** Linux 5.14 or later: the kernel has MADV_POPULATE_READ. */
function kernelPopulates(): boolean {
  if (process.platform !== 'linux') return false;
  const [major = 0, minor = 0] = release().split('.').map(Number);
  return major > 5 || (major === 5 && minor >= 14);
}

/** Reads one byte of every page; returns the minor page faults that took. */
function faultsReadingEveryPage(mapping: Mapping): number {
  const bytes = new Uint8Array(mapping.buffer);
  const page = pageSize();
  let sum = 0;
  const before = process.resourceUsage().minorPageFault;
  for (let i = 0; i < bytes.length; i += page) sum += bytes[i] as number;
  const faults = process.resourceUsage().minorPageFault - before;
  expect(sum).toBe((bytes.length / page) * FILL);
  return faults;
}

/**
 * Writes `bytes` bytes of FILL one page per write, so they sit in the page cache in single
 * pages, as a cache file written through a shared mapping does. (From one large write the
 * kernel may keep large folios, mapped many pages per fault: reading them would barely
 * fault even without prefault.)
 */
function writeInPages(path: string, bytes: number): void {
  const page = new Uint8Array(pageSize()).fill(FILL);
  const fd = openSync(path, 'w');
  try {
    for (let at = 0; at < bytes; at += page.length) writeSync(fd, page, 0, page.length, at);
  } finally {
    closeSync(fd);
  }
}

describe('prefault, read access', () => {
  const temp = makeTempDir();
  afterAll(() => temp.cleanup());
  const path = join(temp.dir, 'pages.bin');
  writeInPages(path, 16 * MiB);

  it('fills the page tables of a read-only mapping: reading it then barely faults', async () => {
    using file = openMappedFile(path, { mode: 'r' });
    using mapping = file.map(0, 16 * MiB, { writable: false });
    const pages = mapping.length / pageSize();
    const done = await prefault(mapping.buffer, { access: 'read' });
    const faults = faultsReadingEveryPage(mapping);
    if (kernelPopulates()) {
      expect(done).toBe(true);
      // Unpopulated, reading every page faults once per 16 pages (the kernel's fault-around).
      expect(faults).toBeLessThan(pages / 64);
    } else {
      expect(done).toBe(false);
    }
  });

  it('settles false, without harm, when the mapping is closed while it runs', async () => {
    using file = openMappedFile(path, { mode: 'r' });
    const mapping = file.map(0, 16 * MiB, { writable: false });
    const pending = prefault(mapping.buffer, { access: 'read' });
    mapping.close();
    // It may have finished before the close: either answer is right, a crash is not.
    expect(typeof (await pending)).toBe('boolean');
    using again = file.map(0, MiB, { writable: false });
    expect(new Uint8Array(again.buffer).every((byte) => byte === FILL)).toBe(true);
  });

  it('does nothing for a buffer without a whole page', async () => {
    expect(await prefault(new ArrayBuffer(0), { access: 'read' })).toBe(false);
    expect(await prefault(new ArrayBuffer(100), { access: 'read' })).toBe(false);
  });

  it('takes write access as before, by default and when asked', async () => {
    const buffer = new ArrayBuffer(4 * MiB);
    expect(await prefault(buffer, {})).toBe(kernelPopulates());
    expect(await prefault(buffer, { access: 'write' })).toBe(kernelPopulates());
    expect(await prefault(buffer, { access: undefined })).toBe(kernelPopulates());
  });

  it('refuses an options argument that is not an object', () => {
    for (const value of [null, 'read', 1, true]) {
      const error = errorOf(() => prefault(new ArrayBuffer(8), value as never));
      expect(error).toBeInstanceOf(TypeError);
      expect(error?.code).toBe('ERR_INVALID_ARG_TYPE');
      expect(error?.message).toMatch(/for options but received/);
    }
  });

  it('refuses an access other than read or write', () => {
    const cases: Array<[unknown, string]> = [
      ['readonly', 'ERR_INVALID_ARG_VALUE'],
      ['READ', 'ERR_INVALID_ARG_VALUE'],
      ['', 'ERR_INVALID_ARG_VALUE'],
      [1, 'ERR_INVALID_ARG_TYPE'],
      [null, 'ERR_INVALID_ARG_TYPE'],
      [true, 'ERR_INVALID_ARG_TYPE'],
    ];
    for (const [access, code] of cases) {
      const error = errorOf(() => prefault(new ArrayBuffer(8), { access } as never));
      expect(error).toBeInstanceOf(TypeError);
      expect(error?.code).toBe(code);
      expect(error?.message).toMatch(/Expected one of 'read', 'write' for options.access/);
    }
  });
});

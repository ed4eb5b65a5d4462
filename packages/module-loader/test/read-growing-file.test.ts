// A file that grows while it is read is cut at the size fstat gave: the read is bounded by
// what was checked against the cap. The growth is real (appended to the real file between
// the size check and the first read); only its timing is arranged by wrapping readSync.
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test, vi } from 'vitest';
import { readRegularFile } from '../src/files/read-regular-file.js';

const growth = { path: '', bytes: 0 };

// readRegularFile takes node:fs from process.getBuiltinModule at each call: wrapping that
// object's readSync arranges the timing.
const nodeFs = process.getBuiltinModule('node:fs');
const realReadSync = nodeFs.readSync;
vi.spyOn(nodeFs, 'readSync').mockImplementation(((...args: Parameters<typeof realReadSync>) => {
  if (growth.bytes > 0) {
    fs.appendFileSync(growth.path, new Uint8Array(growth.bytes).fill(0x21));
    growth.bytes = 0;
  }
  return realReadSync(...args);
}) as typeof realReadSync);

const dir = fs.mkdtempSync(join(tmpdir(), 'memlayer-growing-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test('bytes appended after the size check are not read, even past the cap', () => {
  const path = join(dir, 'growing.bin');
  fs.writeFileSync(path, 'x'.repeat(1000));
  Object.assign(growth, { path, bytes: 1 << 20 });
  const bytes = readRegularFile(path, 4096, { file: path, field: '$' });
  expect(fs.statSync(path).size).toBe(1000 + (1 << 20)); // it did grow, past the 4096 cap
  expect(bytes.length).toBe(1000);
  expect(Buffer.from(bytes).toString()).toBe('x'.repeat(1000));
});

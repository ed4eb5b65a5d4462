// A program file written as pieces: its segments are written from the buffers they came
// from, never copied into one buffer (a .ptd may be larger than the largest ArrayBuffer).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { assembleFile, writeFilePieces } from '../src/pte/write/file-pieces.js';

describe('writeFilePieces', () => {
  const dir = mkdtempSync(join(tmpdir(), 'file-pieces-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('writes each piece at its place, zeros between and after, over what was there', async () => {
    const path = join(dir, 'program.ptd');
    writeFileSync(path, new Uint8Array(100_000).fill(9));
    const file = {
      length: 70_000,
      pieces: [
        { bytes: new Uint8Array([1, 2, 3]), position: 0 },
        // A gap of more than a page, then a piece that crosses pages.
        { bytes: new Uint8Array(9_000).fill(4), position: 12_288 },
        { bytes: new Uint8Array([5]), position: 65_535 },
      ],
    };
    await writeFilePieces(path, file);
    const written = readFileSync(path);
    expect(written.length).toBe(70_000);
    expect(Buffer.compare(written, assembleFile(file))).toBe(0);
    expect(written.subarray(3, 12_288).every((byte) => byte === 0)).toBe(true);
    expect(written.subarray(65_536).every((byte) => byte === 0)).toBe(true);
  });
});

// Files that lost entries: verify fails on them, compact refuses to drop what it cannot read.
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { encodeHeader } from '@memlayer/cache-format';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { memlayer, tempDir, v2FileByHand, v3File, v3TwoCommits } from './helpers.js';

let dir: string;
let cleanup: () => void;
beforeAll(() => {
  ({ dir, cleanup } = tempDir());
});
afterAll(() => cleanup());

/** v2FileByHand (2 entries) with its footer's entry_count patched in place to 99. */
function v2Claiming99(name: string): string {
  const path = join(dir, name);
  writeFileSync(path, v2FileByHand());
  const fd = openSync(path, 'r+');
  try {
    // entry_count is the u32 at footer offset 8; the 20-byte footer ends the file.
    const count = Buffer.alloc(4);
    count.writeUInt32LE(99);
    writeSync(fd, count, 0, 4, readFileSync(path).length - 12);
  } finally {
    closeSync(fd);
  }
  return path;
}

/** `bytes` written to `name`, then its last 100 bytes cut off (as `head -c -100` does). */
function cutShort(name: string, bytes: Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  truncateSync(path, bytes.length - 100);
  return path;
}

describe('verify: a file that lost entries is a problem (exit 1)', () => {
  test('a v2 footer claiming 99 entries over an index of 2', async () => {
    const path = v2Claiming99('claims-99.bin');
    const text = await memlayer(['verify', path]);
    expect(text.status).toBe(1);
    expect(text.stdout).toContain('ENTRIES_LOST');
    expect(text.stdout).toContain('claims 99 entries');
    expect(text.stdout).toContain('ExecuTorch would still load the 2 readable ones');
    const json = JSON.parse((await memlayer(['verify', path, '--json'])).stdout);
    expect(json).toMatchObject({
      ok: false,
      entries: 2,
      lostEntries: { readable: 2, claimed: 99 },
    });
    // One finding for one fact: the tolerated-defect warning is not repeated.
    expect(json.findings.map((f: { code: string }) => f.code)).toEqual(['ENTRIES_LOST']);
  });

  test('a v3 file whose newest trailer is cut off: readers fall back to the older commit', async () => {
    const path = cutShort('cut-newest.bin', v3TwoCommits().bytes);
    const result = await memlayer(['verify', path, '--json']);
    expect(result.status).toBe(1);
    const json = JSON.parse(result.stdout);
    expect(json.lostEntries).toEqual({ readable: 1, claimed: null });
    const lost = json.findings.find((f: { code: string }) => f.code === 'ENTRIES_LOST');
    expect(lost.severity).toBe('problem');
    expect(lost.message).toContain('generation 2');
    expect(lost.message).toContain('readers use generation 1 with 1 entry');
  });

  test('a clean file has no lost entries', async () => {
    const path = join(dir, 'clean.bin');
    writeFileSync(path, v3File().bytes);
    const result = await memlayer(['verify', path, '--json']);
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout).lostEntries).toBeNull();
  });
});

describe('compact refuses to drop entries it cannot read', () => {
  test('without --force: exit 1, the count it would drop, the file unchanged byte for byte', async () => {
    const path = v2Claiming99('refused.bin');
    const before = readFileSync(path);
    const result = await memlayer(['compact', path]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('would keep 2 and drop 97');
    expect(result.stderr).toContain('--force');
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.includes('refused.bin'))).toEqual([
      'refused.bin',
    ]);
  });

  test('with --out: nothing is written there either', async () => {
    const path = v2Claiming99('refused-out.bin');
    const out = join(dir, 'never-written.bin');
    expect((await memlayer(['compact', path, '--out', out])).status).toBe(1);
    expect(existsSync(out)).toBe(false);
  });

  test('--force keeps the readable entries and says how many were dropped', async () => {
    const path = v2Claiming99('forced.bin');
    const result = await memlayer(['compact', path, '--force']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('2 live entries kept (v2), 97 unreadable entries dropped');
    const verify = await memlayer(['verify', path, '--json']);
    expect(verify.status).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ entries: 2, lostEntries: null });
  });

  test('a v3 file whose only trailer is cut off is not emptied without --force', async () => {
    const path = cutShort('cut-only.bin', v3File().bytes);
    const before = readFileSync(path);
    const refused = await memlayer(['compact', path]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('every committed entry is lost');
    expect(refused.stderr).toContain('would keep 0');
    expect(readFileSync(path).equals(before)).toBe(true);
    const forced = await memlayer(['compact', path, '--force', '--json']);
    expect(forced.status, forced.stderr).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({
      entries: 0,
      unreadableEntriesDropped: 'unknown',
    });
  });

  test('a v3 file that never committed lost nothing: it compacts without --force', async () => {
    const path = join(dir, 'fresh.bin');
    writeFileSync(path, encodeHeader({ pageSize: 4096 }));
    const result = await memlayer(['compact', path, '--json']);
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ entries: 0, unreadableEntriesDropped: null });
  });
});

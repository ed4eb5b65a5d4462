// Which commit slots are live, standby, empty, corrupt (damage), torn-tail (interrupted save)
// or name a bad trailer: what `verify` needs to tell damage from an interrupted save.
import { describe, expect, it } from 'vitest';
import {
  COMMIT_SLOT_OFFSETS,
  COMMIT_SLOT_SIZE,
  DAMAGED_SLOT_STATUSES,
  readCommittedTrailer,
  readTrailer,
} from '../src/index.js';
import { bytesOf, commit, MemFile } from './support/writer.js';

function twoCommits(): MemFile {
  const f = new MemFile();
  commit(f, [{ name: 'a', data: bytesOf(1, 1000) }]);
  commit(f, [{ name: 'b', data: bytesOf(2, 300) }]);
  return f;
}

const statuses = (f: MemFile) =>
  readCommittedTrailer(f.read, f.size).slotReports.map((r) => [r.status, r.generation]);

describe('slotReports', () => {
  it('one commit: live + empty; two commits: standby + live', () => {
    const f = new MemFile();
    commit(f, [{ name: 'a', data: bytesOf(1, 10) }]);
    expect(statuses(f)).toEqual([
      ['live', 1],
      ['empty', null],
    ]);
    expect(statuses(twoCommits())).toEqual([
      ['standby', 1],
      ['live', 2],
    ]);
  });

  it('every single bit flip of the newest slot: reported corrupt, readers use the previous commit', () => {
    const base = twoCommits();
    const at = COMMIT_SLOT_OFFSETS[1];
    let flips = 0;
    for (let bit = 0; bit < COMMIT_SLOT_SIZE * 8; bit++) {
      const bytes = base.bytes();
      bytes[at + (bit >> 3)] = (bytes[at + (bit >> 3)] as number) ^ (1 << (bit & 7));
      const c = readCommittedTrailer(bytes, bytes.length);
      expect(c.trailer.generation).toBe(1);
      expect(c.slotIndex).toBe(0);
      const [zero, one] = c.slotReports;
      expect(zero).toMatchObject({ status: 'live', generation: 1, error: null });
      expect(one.status).toBe('corrupt');
      expect(one.error?.code).toBe('ERR_XPWC_CHECKSUM');
      expect(DAMAGED_SLOT_STATUSES).toContain(one.status);
      expect(readTrailer(bytes, bytes.length).commit?.slotReports[1].status).toBe('corrupt');
      flips++;
    }
    expect(flips).toBe(256);
  });

  it('a newest trailer cut off by the end of the file: torn-tail, not damage', () => {
    const f = twoCommits();
    const cut = f.bytes().subarray(0, f.size - 10);
    const c = readCommittedTrailer(cut, cut.length);
    expect(c.trailer.generation).toBe(1);
    expect(c.slotReports[1]).toMatchObject({ status: 'torn-tail', generation: 2 });
    expect(c.slotReports[1].error?.code).toBe('ERR_XPWC_TRUNCATED');
    expect(DAMAGED_SLOT_STATUSES).not.toContain('torn-tail');
  });

  it('a valid slot naming a damaged trailer: bad-trailer', () => {
    const f = twoCommits();
    const bytes = f.bytes();
    bytes[bytes.length - 60] = (bytes[bytes.length - 60] as number) ^ 0x10; // inside the newest trailer
    const c = readCommittedTrailer(bytes, bytes.length);
    expect(c.trailer.generation).toBe(1);
    expect(c.fellBack).toBe(true);
    expect(c.slotReports[1]).toMatchObject({ status: 'bad-trailer', generation: 2 });
    expect(c.slotReports[1].error?.code).toBe('ERR_XPWC_CHECKSUM');
  });
});

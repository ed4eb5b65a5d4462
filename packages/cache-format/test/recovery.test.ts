// Crash recovery of v3 files through the commit slots, following the writer protocol
// (data → fsync → trailer → fsync → commit slot → fsync), simulated in memory.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  COMMIT_SLOT_OFFSETS,
  crc32cOf,
  decodeHeader,
  readCommittedTrailer,
  readCommittedTrailerAsync,
  readTrailer,
  readTrailerAsync,
  trailerHistory,
  verifyEntryData,
  XpwcFormatError,
} from '../src/index.js';
import {
  applyWrites,
  bytesOf,
  commit,
  IDENTITY,
  MemFile,
  planCommitWrites,
  totalBytes,
} from './support/writer.js';

/** A file with two complete commits: generation 1 in slot 0, generation 2 in slot 1. */
function twoCommits(): MemFile {
  const f = new MemFile();
  commit(f, [
    { name: 'a', data: bytesOf(1, 1000) },
    { name: 'b', data: bytesOf(2, 5000) },
  ]);
  commit(f, [{ name: 'c', data: bytesOf(3, 300) }]);
  return f;
}

const names = (f: MemFile) =>
  readCommittedTrailer(f.read, f.size).trailer.entries.map((e) => e.name);

describe('readCommittedTrailer', () => {
  it("checks each committed trailer with the reader's CRC32C when given one", () => {
    const f = twoCommits();
    let calls = 0;
    const counted = (bytes: Uint8Array) => {
      calls++;
      return crc32cOf(bytes);
    };
    expect(readTrailer(f.read, f.size, { crc32c: counted }).commit?.slotIndex).toBe(1);
    expect(calls).toBe(1);
    // One that disagrees makes every commit unusable, as a torn trailer would.
    expect(() => readCommittedTrailer(f.read, f.size, { crc32c: () => 1 })).toThrow(
      expect.objectContaining({ code: 'ERR_XPWC_NO_COMMIT' }),
    );
  });

  it('returns the newest commit after clean commits', () => {
    const f = twoCommits();
    const c = readCommittedTrailer(f.read, f.size, { expectedIdentity: IDENTITY });
    expect(c.trailer.generation).toBe(2);
    expect(c.slotIndex).toBe(1);
    expect(c.fellBack).toBe(false);
    expect(c.deadTailBytes).toBe(0);
    expect(c.trailer.trailerEnd).toBe(f.size);
    expect(c.trailer.entries.map((e) => e.name)).toEqual(['a', 'b', 'c']);
    for (const e of c.trailer.entries) {
      verifyEntryData(e, f.read(e.fileOffset, e.dataSize));
    }
  });

  it('torn newest trailer at the end of the file (crash before its slot): previous commit', () => {
    const f = twoCommits();
    const ops = planCommitWrites(f, [{ name: 'd', data: bytesOf(4, 100) }]);
    const beforeSlot = totalBytes(ops.slice(0, -1));
    applyWrites(f, ops, beforeSlot - 7); // trailer written but for its last 7 bytes
    expect(() => readTrailer(f.bytes(), f.size, {})).not.toThrow();
    const c = readCommittedTrailer(f.read, f.size);
    expect(c.trailer.generation).toBe(2);
    expect(c.fellBack).toBe(false);
    expect(c.deadTailBytes).toBeGreaterThan(0);
    expect(names(f)).toEqual(['a', 'b', 'c']);
  });

  it('complete but uncommitted trailer at the end (crash before the slot write): previous commit', () => {
    const f = twoCommits();
    const ops = planCommitWrites(f, [{ name: 'd', data: bytesOf(4, 100) }]);
    applyWrites(f, ops.slice(0, -1));
    expect(readCommittedTrailer(f.read, f.size).trailer.generation).toBe(2);
  });

  it('torn newest trailer that a slot already names (a lying disk): falls back to the other slot', () => {
    const f = twoCommits();
    const newest = readCommittedTrailer(f.read, f.size);
    // Tear the trailer of generation 2: zero its last 30 bytes.
    f.write(f.size - 30, new Uint8Array(30));
    const c = readCommittedTrailer(f.read, f.size);
    expect(c.trailer.generation).toBe(1);
    expect(c.slotIndex).toBe(0);
    expect(c.fellBack).toBe(true);
    expect(c.skipped).toHaveLength(1);
    expect(c.skipped[0]).toMatchObject({ slotIndex: newest.slotIndex, generation: 2 });
    expect(c.skipped[0]?.error.code).toBe('ERR_XPWC_BAD_MAGIC');
    expect(c.trailer.entries.map((e) => e.name)).toEqual(['a', 'b']);
  });

  it('bit flip inside the newest trailer: CRC catches it, previous commit is used', () => {
    const f = twoCommits();
    const t = readCommittedTrailer(f.read, f.size).trailer;
    const at = t.indexStart + 3;
    f.write(at, Uint8Array.of((f.read(at, 1)[0] as number) ^ 0x04));
    const c = readCommittedTrailer(f.read, f.size);
    expect(c.trailer.generation).toBe(1);
    expect(c.skipped[0]?.error.code).toBe('ERR_XPWC_CHECKSUM');
  });

  it('file truncated below the newest trailer: the older commit, which ends earlier, is used', () => {
    const f = twoCommits();
    const g1End = readCommittedTrailer(f.read, f.size).trailer.prevTrailerEnd;
    const cut = new MemFile(f.bytes().subarray(0, g1End + 10));
    const c = readCommittedTrailer(cut.read, cut.size);
    expect(c.trailer.generation).toBe(1);
    expect(c.skipped[0]?.error.code).toBe('ERR_XPWC_TRUNCATED');
  });

  it('corrupt newest slot: the other slot', () => {
    const f = twoCommits();
    const at = COMMIT_SLOT_OFFSETS[1] + 9;
    f.write(at, Uint8Array.of((f.read(at, 1)[0] as number) ^ 0x80));
    const h = decodeHeader(f.read(0, 4096));
    expect(h.slots[1].status).toBe('corrupt');
    const c = readCommittedTrailer(f.read, f.size);
    expect(c.trailer.generation).toBe(1);
    expect(c.slotIndex).toBe(0);
    expect(c.fellBack).toBe(false); // the corrupt slot was never a candidate
  });

  it('corrupt older slot: the newest is still used', () => {
    const f = twoCommits();
    f.write(COMMIT_SLOT_OFFSETS[0], new Uint8Array(16).fill(0xff));
    expect(readCommittedTrailer(f.read, f.size).trailer.generation).toBe(2);
  });

  it('both slots empty (header written, nothing committed): ERR_XPWC_NO_COMMIT', () => {
    const f = new MemFile();
    const ops = planCommitWrites(f, [{ name: 'a', data: bytesOf(1, 10) }]);
    applyWrites(f, ops.slice(0, -1)); // header, data, trailer; no slot
    expect(() => readCommittedTrailer(f.read, f.size)).toThrow(
      expect.objectContaining({ code: 'ERR_XPWC_NO_COMMIT' }),
    );
  });

  it('both slots corrupt: ERR_XPWC_NO_COMMIT', () => {
    const f = twoCommits();
    for (const at of COMMIT_SLOT_OFFSETS) f.write(at + 30, Uint8Array.of(0x55));
    expect(() => readCommittedTrailer(f.read, f.size)).toThrow(
      expect.objectContaining({ code: 'ERR_XPWC_NO_COMMIT' }),
    );
  });

  it('both named trailers unusable: ERR_XPWC_NO_COMMIT with the reasons', () => {
    const f = twoCommits();
    const c = readCommittedTrailer(f.read, f.size);
    f.write(c.trailer.indexStart, new Uint8Array(4).fill(0xff));
    f.write(c.trailer.prevTrailerEnd - 20, new Uint8Array(4).fill(0xff));
    let err: unknown;
    try {
      readCommittedTrailer(f.read, f.size);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(XpwcFormatError);
    expect((err as XpwcFormatError).code).toBe('ERR_XPWC_NO_COMMIT');
    expect((err as XpwcFormatError).message).toMatch(/generation 2: .*generation 1: /);
  });

  it('identity mismatch of the newest usable commit rejects the cache (no fallback)', () => {
    const f = twoCommits();
    expect(() => readCommittedTrailer(f.read, f.size, { expectedIdentity: 'other' })).toThrow(
      expect.objectContaining({ code: 'ERR_XPWC_IDENTITY_MISMATCH' }),
    );
  });

  it('file shorter than the header', () => {
    expect(() => readCommittedTrailer(new Uint8Array(100), 100)).toThrow(
      expect.objectContaining({ code: 'ERR_XPWC_TRUNCATED' }),
    );
  });

  it('errors of the read callback propagate unchanged', () => {
    const f = twoCommits();
    const boom = new Error('EIO');
    expect(() =>
      readCommittedTrailer((o, l) => {
        if (o > 4096) throw boom;
        return f.read(o, l);
      }, f.size),
    ).toThrow(boom);
  });

  it('a read callback returning too few bytes is ERR_XPWC_TRUNCATED', () => {
    const f = twoCommits();
    expect(() => readCommittedTrailer((o, l) => f.read(o, l - 1), f.size)).toThrow(
      expect.objectContaining({ code: 'ERR_XPWC_TRUNCATED' }),
    );
  });

  it('reads are bounded: the header, then at most the named trailers', () => {
    const f = twoCommits();
    const reads: Array<[number, number]> = [];
    readTrailer((o, l) => {
      reads.push([o, l]);
      return f.read(o, l);
    }, f.size);
    const c = readCommittedTrailer(f.read, f.size);
    expect(reads).toEqual([
      [0, 32],
      [0, 1056],
      [c.slot.trailerOffset, c.slot.trailerLength],
    ]);
  });

  it('async variants give the same result', async () => {
    const f = twoCommits();
    const sync = readCommittedTrailer(f.read, f.size);
    await expect(readCommittedTrailerAsync(async (o, l) => f.read(o, l), f.size)).resolves.toEqual(
      sync,
    );
    await expect(readTrailerAsync(f.bytes(), BigInt(f.size))).resolves.toEqual({
      trailer: sync.trailer,
      commit: sync,
    });
  });

  it('many commits alternate slots and keep a back-pointer chain', () => {
    const f = new MemFile();
    for (let g = 1; g <= 5; g++) commit(f, [{ name: `t${g}`, data: bytesOf(g, 100 * g) }]);
    const c = readCommittedTrailer(f.read, f.size);
    expect(c.trailer.generation).toBe(5);
    expect(c.slotIndex).toBe(0);
    const history = [...trailerHistory(f.read, c.trailer)].map((t) => t.generation);
    expect(history).toEqual([4, 3, 2, 1]);
    expect(c.trailer.entries.map((e) => e.name)).toEqual(['t1', 't2', 't3', 't4', 't5']);
  });

  it('trailerHistory reports a broken link', () => {
    const f = twoCommits();
    const c = readCommittedTrailer(f.read, f.size);
    f.write(c.trailer.prevTrailerEnd - 30, new Uint8Array(4).fill(0xff));
    expect(() => [...trailerHistory(f.read, c.trailer)]).toThrow(XpwcFormatError);
  });

  it('property: a crash after any byte of a commit leaves the old or the new commit', () => {
    const base = twoCommits();
    const ops = planCommitWrites(base, [
      { name: 'b', data: bytesOf(9, 2000) },
      { name: 'e', data: bytesOf(10, 10) },
    ]);
    const total = totalBytes(ops);
    const slotStart = total - 32;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: total }), (k) => {
        const f = base.clone();
        applyWrites(f, ops, k);
        const c = readCommittedTrailer(f.read, f.size, { expectedIdentity: IDENTITY });
        if (k < slotStart) expect(c.trailer.generation).toBe(2);
        if (k === total) expect(c.trailer.generation).toBe(3);
        expect([2, 3]).toContain(c.trailer.generation);
        for (const e of c.trailer.entries) verifyEntryData(e, f.read(e.fileOffset, e.dataSize));
      }),
      { numRuns: 300 },
    );
    // and every byte of the slot write explicitly
    for (let k = slotStart; k <= total; k++) {
      const f = base.clone();
      applyWrites(f, ops, k);
      expect([2, 3]).toContain(readCommittedTrailer(f.read, f.size).trailer.generation);
    }
  });

  it('property: the first commit of a new file, crashed anywhere, is either absent or complete', () => {
    const fresh = new MemFile();
    const ops = planCommitWrites(fresh, [{ name: 'a', data: bytesOf(1, 5000) }]);
    const total = totalBytes(ops);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: total }), (k) => {
        const f = new MemFile();
        applyWrites(f, ops, k);
        try {
          const loaded = readTrailer(f.read, f.size);
          expect(loaded.trailer.version).toBe(3);
          expect(k).toBeGreaterThan(total - 32);
        } catch (e) {
          expect(e).toBeInstanceOf(XpwcFormatError);
          expect(k).toBeLessThan(total);
        }
      }),
      { numRuns: 300 },
    );
  });
});

// describeFileLayout: every byte of a cache file is header, live, pending or orphan, once.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  describeFileLayout,
  type FileLayout,
  readCommittedTrailer,
  readFileLayout,
  readTrailer,
  type TrailerV3,
  trailerHistory,
  V3_HEADER_SIZE,
} from '../src/index.js';
import { expectError } from './support/expect-error.js';
import { rawV2File } from './support/raw.js';
import { applyWrites, bytesOf, commit, MemFile, planCommitWrites } from './support/writer.js';

const PAGE = 4096;

function layoutOf(
  f: MemFile,
  pending?: { start: number; end: number }[],
  regions = true,
): FileLayout {
  const c = readCommittedTrailer(f.read, f.size);
  const input = {
    fileSize: f.size,
    trailer: c.trailer,
    pageSize: c.header.pageSize,
    olderTrailers: [...trailerHistory(f.read, c.trailer)],
    ...(pending ? { pending } : {}),
  };
  return describeFileLayout(input, { regions });
}

/** The invariants every layout keeps. */
function checkCover(l: FileLayout): void {
  let at = 0;
  for (const [i, r] of l.regions.entries()) {
    expect(r.start).toBe(at);
    expect(r.end).toBeGreaterThan(r.start);
    const prev = l.regions[i - 1];
    if (prev) expect(prev.kind !== r.kind || prev.label !== r.label).toBe(true);
    at = r.end;
  }
  expect(at).toBe(l.fileSize);
  const sum = Object.values(l.bytes).reduce((a, b) => a + b, 0);
  expect(sum).toBe(l.fileSize);
  expect(l.liveBytes + l.pendingBytes + l.orphanBytes).toBe(l.fileSize);
}

describe('describeFileLayout', () => {
  it('two commits: header, live data + padding, old trailer, alignment gap, live trailer', () => {
    const f = new MemFile();
    commit(f, [{ name: 'a', data: bytesOf(1, 1000) }]);
    const first = readCommittedTrailer(f.read, f.size).trailer;
    commit(f, [{ name: 'b', data: bytesOf(2, 300) }]);
    const live = readCommittedTrailer(f.read, f.size).trailer;
    const l = layoutOf(f);
    checkCover(l);
    const t1 = first.trailerEnd - first.indexStart;
    const t2 = live.trailerEnd - live.indexStart;
    expect(l.regions.map((r) => [r.kind, r.start, r.end, r.label])).toEqual([
      ['header', 0, V3_HEADER_SIZE, ''],
      ['live-data', 4096, 5096, 'a'],
      ['live-padding', 5096, 8192, 'a'],
      ['old-trailer', 8192, 8192 + t1, 'generation 1'],
      ['superseded', 8192 + t1, 12288, ''],
      ['live-data', 12288, 12588, 'b'],
      ['live-padding', 12588, 16384, 'b'],
      ['live-trailer', 16384, 16384 + t2, ''],
    ]);
    expect(l.orphanBytes).toBe(12288 - 8192);
    expect(l.liveBytes).toBe(4096 + 2 * 4096 + t2);
  });

  it('a re-packed name: the old pack is superseded; without the history its trailer is too', () => {
    const f = new MemFile();
    commit(f, [{ name: 'a', data: bytesOf(1, 5000) }]);
    commit(f, [{ name: 'a', data: bytesOf(2, 100) }]);
    const l = layoutOf(f);
    checkCover(l);
    expect(l.regions.filter((r) => r.kind === 'live-data').map((r) => r.start)).toEqual([16384]);
    expect(l.bytes.superseded).toBe(8192 + (16384 - 12288 - l.bytes['old-trailer']));
    const c = readCommittedTrailer(f.read, f.size);
    const bare = describeFileLayout({ fileSize: f.size, trailer: c.trailer });
    checkCover(bare);
    expect(bare.bytes['old-trailer']).toBe(0);
    expect(bare.orphanBytes).toBe(l.orphanBytes); // orphan either way, only the kind differs
  });

  it('an interrupted save: the bytes after the commit are the uncommitted tail, or pending', () => {
    const f = new MemFile();
    commit(f, [{ name: 'a', data: bytesOf(1, 100) }]);
    const committedEnd = f.size;
    const ops = planCommitWrites(f, [{ name: 'b', data: bytesOf(2, 9000) }]);
    applyWrites(f, ops.slice(0, 1)); // the data only
    const l = layoutOf(f);
    checkCover(l);
    expect(l.bytes['uncommitted-tail']).toBe(f.size - committedEnd);
    expect(l.bytes['uncommitted-tail']).toBe(readCommittedTrailer(f.read, f.size).deadTailBytes);
    const dataAt = ops[0]?.offset as number;
    const withPending = layoutOf(f, [{ start: dataAt, end: f.size }]);
    checkCover(withPending);
    expect(withPending.pendingBytes).toBe(f.size - dataAt);
    expect(withPending.bytes['uncommitted-tail']).toBe(dataAt - committedEnd);
  });

  it('a v2 file: no header; a shadowed duplicate is superseded; zero-size entries reserve a page', () => {
    const file = rawV2File({
      dataLength: 4 * PAGE,
      entries: [
        { name: 'w', fileOffset: 0, dataSize: 100 },
        { name: 'e', fileOffset: 3 * PAGE, dataSize: 0 },
        { name: 'w', fileOffset: PAGE, dataSize: 5000 },
      ],
    });
    const { trailer } = readTrailer(file, file.length);
    const l = describeFileLayout({ fileSize: file.length, trailer });
    checkCover(l);
    expect(l.regions.map((r) => [r.kind, r.start, r.end])).toEqual([
      ['superseded', 0, PAGE],
      ['live-data', PAGE, PAGE + 5000],
      ['live-padding', PAGE + 5000, 3 * PAGE],
      ['live-padding', 3 * PAGE, 4 * PAGE], // 'e', dataSize 0
      ['live-trailer', 4 * PAGE, file.length],
    ]);
    expect(l.bytes.header).toBe(0);
  });

  it('any sequence of commits and crashes: the regions cover the file exactly once', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            names: fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 3 }),
            size: fc.nat({ max: 10_000 }),
            crashAt: fc.option(fc.nat({ max: 20_000 }), { nil: undefined }),
          }),
          { minLength: 1, maxLength: 6 },
        ),
        (steps) => {
          const f = new MemFile();
          commit(f, []);
          for (const [i, s] of steps.entries()) {
            const added = s.names.map((name, k) => ({ name, data: bytesOf(i * 7 + k, s.size) }));
            const ops = planCommitWrites(f, added);
            applyWrites(f, ops, s.crashAt);
          }
          const l = layoutOf(f);
          checkCover(l);
          // Counting only gives the same bytes, without regions.
          const counted = layoutOf(f, [{ start: 0, end: Math.min(f.size, 100) }], false);
          const withPending = layoutOf(f, [{ start: 0, end: Math.min(f.size, 100) }]);
          expect(counted.regions).toEqual([]);
          expect(counted.bytes).toEqual(withPending.bytes);
          expect(counted.orphanBytes).toBe(withPending.orphanBytes);
          const c = readCommittedTrailer(f.read, f.size);
          expect(l.bytes['uncommitted-tail']).toBe(c.deadTailBytes);
          expect(l.bytes['live-trailer']).toBe(c.trailer.trailerEnd - c.trailer.indexStart);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('bad input is a typed error', () => {
    const f = new MemFile();
    commit(f, [{ name: 'a', data: bytesOf(1, 10) }]);
    const trailer = readCommittedTrailer(f.read, f.size).trailer as TrailerV3;
    expectError(
      () => describeFileLayout({ fileSize: f.size - 1, trailer }),
      'ERR_XPWC_INVALID_ARGUMENT',
    );
    expectError(
      () => describeFileLayout({ fileSize: f.size, trailer, pageSize: 1000 }),
      'ERR_XPWC_INVALID_ARGUMENT',
    );
    expectError(
      () => describeFileLayout({ fileSize: f.size, trailer, pending: [{ start: -1, end: 3 }] }),
      'ERR_XPWC_INVALID_ARGUMENT',
    );
    expectError(() => describeFileLayout(null as never), 'ERR_XPWC_INVALID_ARGUMENT');
    expectError(
      () => describeFileLayout({ fileSize: f.size, trailer }, null as never),
      'ERR_XPWC_INVALID_ARGUMENT',
    );
    expectError(
      () => describeFileLayout({ fileSize: 10, trailer: {} as never }),
      'ERR_XPWC_INVALID_ARGUMENT',
    );
  });
});

describe('readFileLayout', () => {
  it('reads, walks the history and lays out in one call (v3 and v2)', () => {
    const f = new MemFile();
    commit(f, [{ name: 'a', data: bytesOf(1, 1000) }]);
    commit(f, [{ name: 'b', data: bytesOf(2, 300) }]);
    const r = readFileLayout(f.read, f.size);
    expect(r.historyError).toBeNull();
    expect(r.layout).toEqual(layoutOf(f));
    expect(r.loaded.commit?.slotReports.map((s) => s.status)).toEqual(['standby', 'live']);
    const v2 = rawV2File({
      dataLength: PAGE,
      entries: [{ name: 'w', fileOffset: 0, dataSize: 9 }],
    });
    const r2 = readFileLayout(v2, v2.length);
    expect(r2.layout.liveBytes).toBe(v2.length);
    expect(r2.layout.orphanBytes).toBe(0);
  });

  it('a broken back-pointer is reported; the older trailers count as superseded', () => {
    const f = new MemFile();
    commit(f, [{ name: 'a', data: bytesOf(1, 1000) }]);
    const firstEnd = f.size;
    commit(f, [{ name: 'b', data: bytesOf(2, 300) }]);
    const bytes = f.bytes();
    bytes[firstEnd - 1] = 9; // the first trailer's version byte: the chain breaks there
    const r = readFileLayout(bytes, bytes.length);
    expect(r.historyError?.code).toBe('ERR_XPWC_UNSUPPORTED_VERSION');
    expect(r.layout.bytes['old-trailer']).toBe(0);
    expect(r.layout.orphanBytes).toBe(layoutOf(f).orphanBytes);
  });
});

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { memlayer, tempDir, v2FileByHand, v3File, v3ManyEntries } from './helpers.js';

let dir: string;
let cleanup: () => void;
let v2Path: string;
let v3Path: string;
let v3EntryOffsets: number[];

beforeAll(() => {
  ({ dir, cleanup } = tempDir());
  v2Path = join(dir, 'executorch-v2.bin');
  writeFileSync(v2Path, v2FileByHand());
  const v3 = v3File();
  v3Path = join(dir, 'memlayer-v3.bin');
  writeFileSync(v3Path, v3.bytes);
  v3EntryOffsets = v3.entryOffsets;
});
afterAll(() => cleanup());

function variant(name: string, edit: (bytes: Uint8Array) => Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, edit(new Uint8Array(readFileSync(v3Path))));
  return path;
}

describe('memlayer inspect', () => {
  test('reads a v2 file built byte by byte from the format table', async () => {
    const result = await memlayer(['inspect', v2Path, '--json']);
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.version).toBe(2);
    expect(report.identity).toBeNull();
    expect(report.pageSize).toBe(4096);
    expect(report.entries).toMatchObject([
      {
        name: 'weightbias',
        offset: 0,
        size: 100,
        seed: 0xdeadbeef,
        fingerprint: null,
        crc32c: null,
      },
      { name: 'w2', offset: 4096, size: 200, seed: 0x12345678, fingerprint: null, crc32c: null },
    ]);
    expect(report.liveBytes).toBe(300);
    expect(report.orphanBytes).toBe(0);
    expect(report.trailerBytes).toBe(readFileSync(v2Path).length - 8192);
  });

  test('draws the layout strip and reports orphans of a v3 file', async () => {
    const result = await memlayer(['inspect', v3Path, '--width', '24']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('memlayer-test/1 nr8kr1sr1');
    expect(result.stdout).toMatch(/\|H+\.+#+\+*#\+*T+\|/);
    expect(result.stdout).toMatch(/orphans\s+4\.00 KiB/);
  });

  test('--svg writes a picture readable without hovering: labels, sizes, axis, legend', async () => {
    const svg = join(dir, 'layout.svg');
    const result = await memlayer(['inspect', v3Path, '--svg', svg]);
    expect(result.status).toBe(0);
    const text = readFileSync(svg, 'utf8');
    expect(text.startsWith('<svg')).toBe(true);
    // Visible text only (hover titles removed): what a person sees.
    const visible = [
      ...text.replace(/<title>.*?<\/title>/g, '').matchAll(/<text[^>]*>([^<]*)<\/text>/g),
    ]
      .map((match) => match[1])
      .join('\n');
    expect(visible).toContain('layer0.weightlayer0.bias');
    expect(visible).toContain('4.88 KiB');
    // The 193-byte trailer is named with its size above the bar; the axis ends at the file size.
    expect(visible).toContain('live trailer 193 B');
    expect(visible).toContain('20.19 KiB (end)');
    expect(visible).toMatch(/orphans: 4\.00 KiB \(19\.8%\)/);
    expect(visible).toMatch(/header: 4\.00 KiB/);
    // Minimum widths: no region is drawn narrower than a few pixels.
    const widths = [...text.matchAll(/<rect x="[\d.]+" y="104" width="([\d.]+)"/g)].map((m) =>
      Number(m[1]),
    );
    expect(widths.length).toBeGreaterThanOrEqual(6);
    const trailerWidth = /<rect x="[\d.]+" y="104" width="([\d.]+)"[^>]*><title>trailer:/.exec(
      text,
    )?.[1];
    expect(Number(trailerWidth)).toBeGreaterThanOrEqual(14);
  });

  test('--svg with more regions than pixels keeps the bar at its width, header and trailer visible', async () => {
    const path = join(dir, 'many.bin');
    writeFileSync(path, v3ManyEntries(600));
    const svg = join(dir, 'many.svg');
    expect((await memlayer(['inspect', path, '--svg', svg])).status).toBe(0);
    const text = readFileSync(svg, 'utf8');
    const rects = [
      ...text.matchAll(/<rect x="([\d.]+)" y="104" width="([\d.]+)"[^>]*><title>([^:]*):/g),
    ];
    expect(rects.length).toBe(1 + 600 * 2 + 1);
    const widths = rects.map((m) => Number(m[2]));
    expect(Math.abs(widths.reduce((a, b) => a + b, 0) - 960)).toBeLessThan(1);
    expect(Math.min(...widths)).toBeGreaterThan(0);
    const widthOf = (label: string) => Number(rects.find((m) => m[3] === label)?.[2]);
    expect(widthOf('header')).toBeGreaterThanOrEqual(14);
    expect(widthOf('trailer')).toBeGreaterThanOrEqual(14);
  });

  test('--svg does not write into a folder that does not exist, and leaves no temp file', async () => {
    const result = await memlayer(['inspect', v3Path, '--svg', join(dir, 'missing', 'x.svg')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('cannot write (ENOENT)');
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});

describe('memlayer verify', () => {
  test('a clean v3 file verifies with --full (exit 0)', async () => {
    const result = await memlayer(['verify', v3Path, '--full', '--json']);
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report).toMatchObject({
      ok: true,
      mode: 'full',
      entries: 2,
      checkedDataBytes: 5300,
      findings: [],
    });
  });

  test('a flipped data byte is found only by --full (exit 1, entry named)', async () => {
    const path = variant('bitrot.bin', (bytes) => {
      const at = (v3EntryOffsets[1] as number) + 10;
      bytes[at] = (bytes[at] as number) ^ 0x01;
      return bytes;
    });
    expect((await memlayer(['verify', path])).status).toBe(0);
    const result = await memlayer(['verify', path, '--full']);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('ERR_XPWC_CHECKSUM');
    expect(result.stdout).toContain('layer1.weightlayer1.bias');
  });

  test('a damaged trailer is a problem found (exit 1) with the code and offset', async () => {
    const path = variant('torn-trailer.bin', (bytes) => {
      bytes[bytes.length - 100] = (bytes[bytes.length - 100] as number) ^ 0xff;
      return bytes;
    });
    const result = await memlayer(['verify', path, '--json']);
    expect(result.status).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report.ok).toBe(false);
    expect(report.findings[0].code).toBe('ERR_XPWC_NO_COMMIT');
  });

  test('v2 with --full warns that there are no checksums but passes', async () => {
    const result = await memlayer(['verify', v2Path, '--full']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('NO_CHECKSUMS');
  });

  test('a truncated v2 file is unusable input (exit 2, one line on stderr)', async () => {
    const path = join(dir, 'truncated.bin');
    writeFileSync(path, v2FileByHand().subarray(0, 8200));
    const result = await memlayer(['verify', path]);
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(path);
    expect(result.stderr).toContain('ERR_XPWC_BAD_MAGIC');
  });

  test('a missing file is exit 2 and says what to do', async () => {
    const result = await memlayer(['inspect', join(dir, 'nope.bin')]);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('ENOENT');
    expect(result.stderr).toContain('check the path');
  });
});

describe('memlayer stats and usage', () => {
  test('stats --json counts entries and bytes', async () => {
    const result = await memlayer(['stats', v3Path, '--json']);
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      version: 3,
      entries: 2,
      liveBytes: 5300,
      orphanBytes: 4096,
      committedGenerations: 1,
    });
  });

  test('bad usage is exit 2', async () => {
    expect((await memlayer(['inspect'])).status).toBe(2);
    expect((await memlayer(['inspect', v3Path, '--bogus'])).status).toBe(2);
    expect((await memlayer(['frobnicate'])).status).toBe(2);
    expect((await memlayer(['--help'])).status).toBe(0);
  });
});

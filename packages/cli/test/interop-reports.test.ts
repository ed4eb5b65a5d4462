import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMMIT_SLOT_OFFSETS } from '@memlayer/cache-format';
import { fullyConnectedSeed } from '@memlayer/xnnpack-cache';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { memlayer, tempDir, v2Bytes, v3TwoCommits } from './helpers.js';

// Files ExecuTorch writes and accepts are reported with warnings, never as failures;
// damage to a commit slot is a failure, distinct from an interrupted save.
let dir: string;
let cleanup: () => void;
beforeAll(() => {
  ({ dir, cleanup } = tempDir());
});
afterAll(() => cleanup());

function file(name: string, bytes: Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

describe('v2 files as ExecuTorch writes them', () => {
  test('a name that is not UTF-8 is shown as hex; inspect and verify exit 0', async () => {
    const path = file(
      'bytes-name.bin',
      v2Bytes([{ name: Uint8Array.of(0x77, 0xff, 0xfe, 0x01), offset: 0, size: 64, seed: 7 }], {
        dataEnd: 4096,
      }),
    );
    const json = await memlayer(['inspect', path, '--json']);
    expect(json.status, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.entries[0].nameHex).toBe('77fffe01');
    const text = await memlayer(['inspect', path]);
    expect(text.stdout).toContain('hex:77fffe01');
    expect((await memlayer(['verify', path, '--full'])).status).toBe(0);
  });

  test('a short index (fewer entries than entry_count) is read like ExecuTorch, but verify fails', async () => {
    const path = file(
      'short-index.bin',
      v2Bytes([{ name: 'w', offset: 0, size: 64, seed: 7 }], { dataEnd: 4096, entryCount: 3 }),
    );
    const inspect = await memlayer(['inspect', path, '--json']);
    expect(inspect.status, inspect.stderr).toBe(0);
    const report = JSON.parse(inspect.stdout);
    expect(report.entries).toHaveLength(1);
    expect(report.tolerated.length).toBeGreaterThan(0);
    const text = await memlayer(['inspect', path]);
    expect(text.stderr).toMatch(/^warning ERR_XPWC_\w+ at byte \d+: .*as ExecuTorch does/m);
    // Entries were lost: reading on is right, calling the file sound is not.
    const verify = await memlayer(['verify', path, '--json']);
    expect(verify.status).toBe(1);
    expect(JSON.parse(verify.stdout).lostEntries).toEqual({ readable: 1, claimed: 3 });
  });

  test('a file that is only the 20-byte footer (no entries) reads as empty', async () => {
    const path = file('footer-only.bin', v2Bytes([], { dataEnd: 0 }));
    const inspect = await memlayer(['inspect', path, '--json']);
    expect(inspect.status, inspect.stderr).toBe(0);
    expect(JSON.parse(inspect.stdout)).toMatchObject({ version: 2, fileSize: 20, entries: [] });
    expect((await memlayer(['verify', path])).status).toBe(0);
  });

  test("inspect tells which XNNPACK revision a v2 file's seeds fit", async () => {
    // The seed mixes in the operator type (59 at 1adaa7c7, 63 at 92a7ad50) and XORs the
    // dimensions, so one entry can fit both revisions under different tilings; a file of
    // several shapes written by one build fits one revision under one or two tilings.
    const entry = (operatorType: number, nc: number, kc: number, offset: number) => ({
      name: `${nc}x${kc}`,
      offset,
      size: Math.ceil(nc / 8) * 8 * (1 + kc) * 4,
      seed: fullyConnectedSeed({
        outputChannels: nc,
        inputChannels: kc,
        nr: 8,
        kr: 1,
        sr: 1,
        operatorType,
      }),
    });
    const old = file(
      'rev-1adaa7c7.bin',
      v2Bytes([entry(59, 96, 32, 0), entry(59, 128, 64, 16384)], { dataEnd: 65536 }),
    );
    const report = JSON.parse((await memlayer(['inspect', old, '--json'])).stdout);
    expect(report.xnnpackRevisions).toEqual([
      // 96x32 fits 92a7ad50 under nr32kr1sr1 and nr8kr1sr4: the first preset is named.
      { revision: '92a7ad50', entries: 1, tiling: 'nr32kr1sr1', tilingEntries: 1 },
      { revision: '1adaa7c7', entries: 2, tiling: 'nr8kr1sr1', tilingEntries: 2 },
    ]);
    expect(report.entries[1].revisions).toEqual(['1adaa7c7']);
    expect(report.entries[1].fits).toEqual(['1adaa7c7 nr8kr1sr1 128x64']);
    const text = await memlayer(['inspect', old]);
    expect(text.stdout).toMatch(
      /xnnpack +seeds fit 1adaa7c7 \(nr8kr1sr1\); entries fitting: 92a7ad50 1\/2, 1adaa7c7 2\/2, by seed and packed size/,
    );
    const current = file(
      'rev-92a7ad50.bin',
      v2Bytes([entry(63, 256, 128, 0)], { dataEnd: 139264 }),
    );
    expect((await memlayer(['inspect', current])).stdout).toContain(
      'seeds fit 92a7ad50 (nr8kr1sr1)',
    );
    // ExecuTorch on an FMA3 CPU: 128 outputs take the default config (nr16), 12 the nr2 one (nr8).
    const fma3 = (nc: number, kc: number, nr: number, offset: number) => ({
      name: `${nc}x${kc}`,
      offset,
      size: Math.ceil(nc / nr) * nr * (1 + kc) * 4,
      seed: fullyConnectedSeed({ outputChannels: nc, inputChannels: kc, nr, kr: 1, sr: 1 }),
    });
    const twoConfigs = file(
      'rev-92a7ad50-fma3.bin',
      v2Bytes([fma3(128, 64, 16, 0), fma3(12, 16, 8, 36864)], { dataEnd: 40960 }),
    );
    expect((await memlayer(['inspect', twoConfigs])).stdout).toContain(
      'seeds fit 92a7ad50 (nr16kr1sr1+nr8kr1sr1)',
    );
    // One 96x32 entry alone fits both: the tool says so rather than guess.
    const alone = file('rev-ambiguous.bin', v2Bytes([entry(63, 96, 32, 0)], { dataEnd: 16384 }));
    expect((await memlayer(['inspect', alone])).stdout).toContain(' or ');
  });
});

describe('v3 commit slots', () => {
  test('entries show their packing layout and the revision it names', async () => {
    const path = file('two-commits.bin', v3TwoCommits().bytes);
    const result = await memlayer(['inspect', path]);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('op 63 96x32 nr8 kr1 sr1');
    expect(result.stdout).toContain('packed for 92a7ad50; entries fitting: 92a7ad50 2/2');
    expect(result.stdout).toContain('by the recorded layouts');
    const report = JSON.parse((await memlayer(['inspect', path, '--json'])).stdout);
    expect(report.entries[1].layout).toMatchObject({ outputChannels: 96, inputChannels: 32 });
    expect(report.generation).toBe(2);
    expect((await memlayer(['verify', path, '--full'])).status).toBe(0);
  });

  test('one flipped bit in the newest commit slot: verify exits 1 (damage)', async () => {
    const bytes = v3TwoCommits().bytes;
    const at = (COMMIT_SLOT_OFFSETS[1] as number) + 9;
    bytes[at] = (bytes[at] as number) ^ 0x10;
    const path = file('corrupt-slot.bin', bytes);
    const verify = await memlayer(['verify', path, '--json']);
    expect(verify.status).toBe(1);
    const codes = JSON.parse(verify.stdout).findings.map((f: { code: string }) => f.code);
    expect(codes).toContain('COMMIT_SLOT_CORRUPT');
    // inspect still shows the file (generation 1 is what readers use) and warns.
    const inspect = await memlayer(['inspect', path, '--json']);
    expect(inspect.status).toBe(0);
    expect(JSON.parse(inspect.stdout).generation).toBe(1);
    expect((await memlayer(['inspect', path])).stderr).toContain('commit slot 1 is corrupt');
  });

  test('a committed trailer cut off by the end of the file lost its entries: verify exits 1', async () => {
    const { bytes, lastIndexStart } = v3TwoCommits();
    const path = file('torn.bin', bytes.subarray(0, lastIndexStart + 40));
    const verify = await memlayer(['verify', path, '--json']);
    expect(verify.status, verify.stdout).toBe(1);
    const findings = JSON.parse(verify.stdout).findings;
    expect(findings.map((f: { code: string }) => f.code)).toContain('ENTRIES_LOST');
  });
});

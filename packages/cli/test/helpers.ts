import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  COMMIT_SLOT_OFFSETS,
  commitSlotForTrailer,
  crc32cOf,
  encodeCommitSlot,
  encodeHeader,
  encodeTrailer,
} from '@memlayer/cache-format';
import type { CliIoInput } from '../src/io.js';
import { main } from '../src/main.js';
import { selfCommand } from '../src/self-command.js';

export interface RunResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** A captured output stream; `isTTY`/`columns` let a test play a terminal. */
export function capture(options: { isTTY?: boolean; columns?: number } = {}) {
  const chunks: string[] = [];
  return {
    isTTY: options.isTTY ?? false,
    ...(options.columns === undefined ? {} : { columns: options.columns }),
    write(text: string) {
      chunks.push(text);
      return true;
    },
    text: () => chunks.join(''),
  };
}

/**
 * Runs one `memlayer` invocation in this process on the TypeScript sources (no build),
 * with captured stdout/stderr, no terminal, NO_COLOR and no width limit unless a test
 * says otherwise.
 */
export async function memlayer(
  args: string[],
  options: { env?: Record<string, string>; io?: CliIoInput } = {},
): Promise<RunResult> {
  const stdout = capture();
  const stderr = capture();
  const status = await main(args, {
    stdout,
    stderr,
    env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', ...options.env },
    columns: undefined,
    ...options.io,
  });
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}

const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Starts the real executable (src/bin.ts through tsx) as a user would, without a TTY. */
export function spawnMemlayer(args: string[], env: Record<string, string> = {}) {
  const self = selfCommand();
  return spawn(self.command, [...self.args, ...args], {
    cwd: PACKAGE_DIR,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** spawnMemlayer, collected: exit status or signal, and both outputs. */
export function runMemlayer(
  args: string[],
  env: Record<string, string> = {},
): Promise<RunResult & { signal: NodeJS.Signals | null }> {
  const child = spawnMemlayer(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status, signal) =>
      resolve({ status: status ?? -1, signal, stdout, stderr }),
    );
  });
}

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'memlayer-cli-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function putU32(bytes: number[], value: number): void {
  for (let i = 0; i < 4; i++) bytes.push((value >>> (8 * i)) & 0xff);
}

function putU64(bytes: number[], value: number): void {
  putU32(bytes, value % 2 ** 32);
  putU32(bytes, Math.floor(value / 2 ** 32));
}

export interface HandEntry {
  /** Text (written as UTF-8) or raw bytes (ExecuTorch names are bytes). */
  name: string | Uint8Array;
  offset: number;
  size: number;
  seed: number;
}

/**
 * A v2 cache file built byte by byte from the format table (not with the encoder), the way
 * ExecuTorch's XNNWeightsCache writes it: data, then per entry u32 name length, name bytes,
 * u64 offset, u64 size, u32 seed; then the 20-byte footer (u64 index_start, u32 entry_count,
 * magic "XPWC", u32 version 2). `entryCount` may claim more entries than are written.
 */
export function v2Bytes(
  entries: HandEntry[],
  options: { dataEnd: number; entryCount?: number },
): Uint8Array {
  const bytes: number[] = new Array(options.dataEnd).fill(0);
  for (const entry of entries)
    for (let i = 0; i < entry.size; i++) bytes[entry.offset + i] = (i * 7 + entry.offset) & 0xff;
  for (const { name, offset, size, seed } of entries) {
    const nameBytes = typeof name === 'string' ? new TextEncoder().encode(name) : name;
    putU32(bytes, nameBytes.length);
    bytes.push(...nameBytes);
    putU64(bytes, offset);
    putU64(bytes, size);
    putU32(bytes, seed);
  }
  putU64(bytes, options.dataEnd); // index_start
  putU32(bytes, options.entryCount ?? entries.length);
  bytes.push(0x43, 0x57, 0x50, 0x58); // magic "XPWC" as 0x58505743 little-endian
  putU32(bytes, 2);
  return Uint8Array.from(bytes);
}

/** "weightbias" at 0 (100 bytes), "w2" at 4096 (200 bytes), index at 8192. */
export function v2FileByHand(): Uint8Array {
  return v2Bytes(
    [
      { name: 'weightbias', offset: 0, size: 100, seed: 0xdeadbeef },
      { name: 'w2', offset: 4096, size: 200, seed: 0x12345678 },
    ],
    { dataEnd: 8192 },
  );
}

/** A v3 file with one committed trailer over two entries, plus an orphan region. */
export function v3File(): { bytes: Uint8Array; entryOffsets: number[] } {
  const page = 4096;
  const data = [
    Uint8Array.from({ length: 5000 }, (_, i) => i & 0xff),
    Uint8Array.from({ length: 300 }, (_, i) => (i * 3) & 0xff),
  ];
  // Layout: header | orphan page (a superseded pack) | entry 0 (2 pages) | entry 1 | trailer
  const offsets = [2 * page, 4 * page];
  const indexStart = 5 * page;
  const entries = data.map((bytes, i) => ({
    name: `layer${i}.weightlayer${i}.bias`,
    fileOffset: offsets[i] as number,
    dataSize: bytes.length,
    seed: 0x1000 + i,
    fingerprint: 0xabcd,
    crc32c: crc32cOf(bytes),
  }));
  const trailer = encodeTrailer(entries, {
    indexStart,
    identity: 'memlayer-test/1 nr8kr1sr1',
    generation: 1,
  });
  const file = new Uint8Array(indexStart + trailer.length);
  file.set(encodeHeader({ pageSize: page }), 0);
  file.fill(0x55, page, 2 * page);
  for (const [i, bytes] of data.entries()) file.set(bytes, offsets[i] as number);
  file.set(trailer, indexStart);
  const slot = encodeCommitSlot(commitSlotForTrailer(trailer), 0);
  file.set(slot, COMMIT_SLOT_OFFSETS[0] as number);
  return { bytes: file, entryOffsets: offsets };
}

/** A fully-connected 96x32 layout at XNNPACK 92a7ad50 (operator type 63), nr8 kr1 sr1. */
export const FC_96x32 = {
  operatorType: 63,
  outputChannels: 96,
  inputChannels: 32,
  nr: 8,
  kr: 1,
  sr: 1,
  extraBytes: 0,
  flags: 0,
} as const;

/**
 * A v3 file with two commits: generation 1 (entry 0) in slot 0, generation 2 (entries 0
 * and 1, with packing layouts) in slot 1, its trailer at `lastIndexStart`.
 */
export function v3TwoCommits(): { bytes: Uint8Array; lastIndexStart: number } {
  const page = 4096;
  const data = [new Uint8Array(12672).fill(3), new Uint8Array(700).fill(9)];
  const identity = 'memlayer-test/1 nr8kr1sr1';
  const entry = (i: number, fileOffset: number) => ({
    name: `w${i}`,
    fileOffset,
    dataSize: (data[i] as Uint8Array).length,
    seed: 0x2000 + i,
    fingerprint: 0xabcd,
    crc32c: crc32cOf(data[i] as Uint8Array),
    layout: FC_96x32,
  });
  const first = encodeTrailer([entry(0, page)], { indexStart: 5 * page, identity, generation: 1 });
  const firstEnd = 5 * page + first.length;
  const lastIndexStart = 7 * page;
  const second = encodeTrailer([entry(0, page), entry(1, 6 * page)], {
    indexStart: lastIndexStart,
    identity,
    generation: 2,
    prevTrailerEnd: firstEnd,
    prevGeneration: 1,
  });
  const file = new Uint8Array(lastIndexStart + second.length);
  file.set(encodeHeader({ pageSize: page }), 0);
  file.set(data[0] as Uint8Array, page);
  file.set(first, 5 * page);
  file.set(data[1] as Uint8Array, 6 * page);
  file.set(second, lastIndexStart);
  file.set(encodeCommitSlot(commitSlotForTrailer(first), 0), COMMIT_SLOT_OFFSETS[0] as number);
  file.set(encodeCommitSlot(commitSlotForTrailer(second), 1), COMMIT_SLOT_OFFSETS[1] as number);
  return { bytes: file, lastIndexStart };
}

/** A v3 file with `count` small entries, one per page: more regions than the picture has pixels. */
export function v3ManyEntries(count: number): Uint8Array {
  const page = 4096;
  const entries = Array.from({ length: count }, (_, i) => ({
    name: `e${i}`,
    fileOffset: page * (1 + i),
    dataSize: 1000 + (i % 7) * 400,
    seed: i,
    fingerprint: 1,
    crc32c: 0,
  }));
  const indexStart = page * (count + 1);
  const trailer = encodeTrailer(entries, { indexStart, identity: 'many', generation: 1 });
  const file = new Uint8Array(indexStart + trailer.length);
  file.set(encodeHeader({ pageSize: page }), 0);
  file.set(trailer, indexStart);
  file.set(encodeCommitSlot(commitSlotForTrailer(trailer), 0), COMMIT_SLOT_OFFSETS[0] as number);
  return file;
}

// Mutated .pte, .ptd and XNNPACK payloads: whatever the bytes, reading them either works
// or throws ModuleLoaderError ERR_PROGRAM_INVALID (never a RangeError, a TypeError or an
// out-of-bounds read), in time and memory bounded by the file.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { delegateProblems } from '../src/backends/xnnpack-delegate-checks.js';
import { constantKey } from '../src/backends/xnnpack-delegate-data.js';
import { ModuleLoaderError } from '../src/index.js';
import type { ByteRanges } from '../src/pte/mapped-bytes.js';
import { readPtdNamedData } from '../src/pte/ptd-file.js';
import { PteFile } from '../src/pte/pte-file.js';
import { readXnnGraph, XNN_INVALID_ID, XNODE_FULLY_CONNECTED } from '../src/pte/xnn-graph.js';
import { makeLayers, random, writeMlp } from './pte-fixtures.js';

/** Cases per seed file; three seeds: 1.05 M cases in all. */
const CASES_PER_SEED = 350_000;

/** Bytes in memory as the readers see a file; a range past the end is a bug of theirs. */
class BytesInMemory implements ByteRanges {
  constructor(readonly bytes: Uint8Array) {}
  get size(): number {
    return this.bytes.byteLength;
  }
  read(start: number, length: number): Uint8Array {
    return this.bytes.slice(start, start + length);
  }
  range(start: number, length: number): Uint8Array {
    if (!(start >= 0 && length >= 0 && start + length <= this.size)) {
      throw new Error(`a range past the end: ${start}+${length} of ${this.size}`);
    }
    return this.bytes.subarray(start, start + length);
  }
  windowRange(start: number, length: number): Uint8Array {
    return this.range(start, length);
  }
}

function readAll(bytes: Uint8Array, kind: 'pte' | 'ptd'): void {
  const source = new BytesInMemory(bytes);
  if (kind === 'ptd') {
    for (const { start, size } of readPtdNamedData('fuzz.ptd', source).values())
      source.range(start, size);
    return;
  }
  const file = new PteFile('fuzz.pte', source);
  for (const { start, size } of file.namedData().values()) source.range(start, size);
  for (const name of file.methodNames()) {
    const method = file.method(name);
    if (method === undefined) continue;
    for (const value of [...method.inputs, ...method.outputs]) method.tensor(value);
    for (const delegate of method.delegates) {
      const graph = readXnnGraph(delegate.payload, (what) => {
        throw new ModuleLoaderError('ERR_PROGRAM_INVALID', what);
      });
      delegateProblems(graph);
      for (let n = 0; n < graph.nodeCount; n++) {
        if (graph.nodeType[n] !== XNODE_FULLY_CONNECTED) continue;
        const filter = graph.nodeFilter[n] as number;
        if (graph.constantIndex[filter] !== 0) constantKey(graph, filter);
        const bias = graph.nodeBias[n] as number;
        if (bias !== XNN_INVALID_ID && graph.constantIndex[bias] !== 0) constantKey(graph, bias);
      }
    }
  }
}

const INTERESTING = [0, 1, 4, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffc, 0x10000];

test('1M mutated programs: only ERR_PROGRAM_INVALID escapes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pte-fuzz-'));
  try {
    const ptdProgram = writeMlp(dir, 'ptd', makeLayers([3, 4, 2]));
    const offsetProgram = writeMlp(dir, 'offset', makeLayers([3, 2], 5, 'clamp'), {
      constants: 'offset',
      tail: 42,
    });
    const seeds: [Uint8Array, 'pte' | 'ptd'][] = [
      [readFileSync(ptdProgram.pte), 'pte'],
      [readFileSync(ptdProgram.ptd as string), 'ptd'],
      [readFileSync(offsetProgram.pte), 'pte'],
    ];
    const next = random(0x9e3779b9);
    const outcomes = { read: 0, refused: 0 };
    for (const [seed, kind] of seeds) {
      readAll(seed, kind); // the seed itself is valid
      const bytes = new Uint8Array(seed.length);
      const view = new DataView(bytes.buffer);
      for (let i = 0; i < CASES_PER_SEED; i++) {
        bytes.set(seed);
        let length = seed.length;
        const mutation = next();
        if (mutation < 0.1) {
          length = Math.floor(next() * seed.length);
        } else if (mutation < 0.55) {
          const flips = 1 + Math.floor(next() * 4);
          for (let f = 0; f < flips; f++) {
            const at = Math.floor(next() * length);
            bytes[at] = (bytes[at] as number) ^ (1 << Math.floor(next() * 8));
          }
        } else {
          const at = Math.floor(next() * (length / 4)) * 4;
          const pick = Math.floor(next() * (INTERESTING.length + 2));
          const value =
            pick < INTERESTING.length
              ? (INTERESTING[pick] as number)
              : pick === INTERESTING.length
                ? length
                : Math.floor(next() * length);
          if (at + 4 <= length) view.setUint32(at, value >>> 0, true);
        }
        try {
          readAll(bytes.subarray(0, length), kind);
          outcomes.read++;
        } catch (error) {
          if (!(error instanceof ModuleLoaderError) || error.code !== 'ERR_PROGRAM_INVALID')
            throw error;
          outcomes.refused++;
        }
      }
    }
    expect(outcomes.read + outcomes.refused).toBe(3 * CASES_PER_SEED);
    // Both outcomes occur: the mutations reach past the headers.
    expect(outcomes.read).toBeGreaterThan(1000);
    expect(outcomes.refused).toBeGreaterThan(1000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 600_000);

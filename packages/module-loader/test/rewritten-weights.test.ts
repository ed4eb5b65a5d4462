// A weight file rewritten in place with its old size and times put back (what `tar x`,
// `cp -p` and `touch -d` leave) looks unchanged to stat. Every load reads and hashes the
// weights it keys, so the new bytes are what runs, in this process and in a fresh one.
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import {
  BackendOptions,
  type BackendRegistry,
  createDefaultRegistry,
  LoadBackendOptionsMap,
  Module,
} from '../src/index.js';
import { runChild } from './cached-child.js';
import {
  heapOnlyOutput,
  type LayerSpec,
  programInput,
  sha256,
  writeLinearProgram,
} from './weights-programs.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'memlayer-rewritten-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const layers = (seed: number): LayerSpec[] => [
  { weight: 'w0', bias: 'b0', out: 24, in: 16, seed },
  { weight: 'w1', bias: 'b1', out: 8, in: 24, seed: seed + 10 },
];

/** Runs "forward" once through the cache file in this process; the output's SHA-256. */
function runHere(registry: BackendRegistry, program: string, cachePath: string): string {
  const module = new Module(program, { registry });
  module.load(
    new LoadBackendOptionsMap().setOptions(
      'XnnpackBackend',
      new BackendOptions().setOption('packed_cache_path', cachePath),
    ),
  );
  const [output] = module.execute('forward', [programInput(module.programManifest())]);
  module.dispose();
  return sha256(output?.data ?? new Float32Array(0));
}

test('same size, old mtime put back (utimes): a fresh Module runs the new weights, here and in a fresh process', () => {
  const program = writeLinearProgram(join(dir, 'a'), layers(1));
  const newProgram = writeLinearProgram(join(dir, 'new'), layers(700));
  const oldOutput = heapOnlyOutput(program);
  const newOutput = heapOnlyOutput(newProgram);
  expect(newOutput).not.toBe(oldOutput);
  // Whole-second times, as on a file system with 1-second timestamps.
  const weights = join(dir, 'a', 'weights-0.safetensors');
  const seconds = Math.floor(Date.now() / 1000) - 60;
  utimesSync(weights, seconds, seconds);
  const cachePath = join(dir, 'weights.xpwc');
  const registry = createDefaultRegistry();
  expect(runHere(registry, program, cachePath)).toBe(oldOutput);
  expect(runChild(program, cachePath).output).toBe(oldOutput);

  // Rewrite the weights in place (same inode, same size, other bytes), then put the old
  // access and modification times back.
  const before = statSync(weights, { bigint: true });
  const replacement = readFileSync(join(dir, 'new', 'weights-0.safetensors'));
  expect(replacement.byteLength).toBe(Number(before.size));
  expect(replacement.equals(readFileSync(weights))).toBe(false);
  writeFileSync(weights, replacement);
  utimesSync(weights, seconds, seconds);
  const after = statSync(weights, { bigint: true });
  expect([after.ino, after.size, after.mtimeNs]).toEqual([before.ino, before.size, before.mtimeNs]);

  expect(runHere(registry, program, cachePath)).toBe(newOutput);
  const fresh = runChild(program, cachePath);
  expect(fresh.output).toBe(newOutput);
  expect(fresh.stats).toMatchObject({ filesHashed: 1, tensorsHashed: 4, headersParsed: 1 });
  // Nothing was written beside the cache file.
  expect(readdirSync(dir).sort()).toEqual(['a', 'new', 'weights.xpwc']);
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  BackendOptions,
  type BackendRegistry,
  createDefaultRegistry,
  LoadBackendOptionsMap,
  Module,
} from '../src/index.js';
import { heapOnlyOutput, programInput, sha256, writeLinearProgram } from './weights-programs.js';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'memlayer-property-'));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

// Small pools so names, bytes and XOR-colliding shapes ([96, 32] and [112, 48] share a
// seed) repeat often across the programs of one sequence.
const program = fc.record({
  weight: fc.constantFrom('w', 'weight', 'k'),
  bias: fc.option(fc.constantFrom('b', 'bias'), { nil: undefined }),
  shape: fc.constantFrom([8, 16], [16, 8], [96, 32], [112, 48]),
  seed: fc.constantFrom(1, 2, 3),
  // Which of two folders: a folder reused with other content is a file rewritten in place.
  folder: fc.constantFrom(0, 1),
  freshRegistry: fc.boolean(),
});

describe('content-keyed cache: random program sequences through one cache path', () => {
  test('every output equals the program’s heap-only reference', () => {
    let run = 0;
    fc.assert(
      fc.property(fc.array(program, { minLength: 1, maxLength: 5 }), (sequence) => {
        run++;
        const cachePath = join(root, `cache-${run}.xpwc`);
        let shared: BackendRegistry = createDefaultRegistry();
        for (const step of sequence) {
          const [out, inFeatures] = step.shape as [number, number];
          const manifest = writeLinearProgram(join(root, `run-${run}`, `p${step.folder}`), [
            { weight: step.weight, bias: step.bias, out, in: inFeatures, seed: step.seed },
          ]);
          const reference = heapOnlyOutput(manifest);
          if (step.freshRegistry) shared = createDefaultRegistry();
          const module = new Module(manifest, { registry: shared });
          module.load(
            new LoadBackendOptionsMap().setOptions(
              'XnnpackBackend',
              new BackendOptions().setOption('packed_cache_path', cachePath),
            ),
          );
          const [output] = module.execute('forward', [programInput(module.programManifest())]);
          expect(sha256(output?.data as Float32Array)).toBe(reference);
          module.dispose();
        }
      }),
      { numRuns: 25 },
    );
  });
});

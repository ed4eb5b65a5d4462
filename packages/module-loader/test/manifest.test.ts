import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ModuleLoaderError, parseManifest } from '../src/index.js';

const valid = {
  format: 'memlayer-program',
  version: 1,
  weights: ['model.safetensors'],
  methods: {
    forward: {
      backend: 'XnnpackBackend',
      inputs: [{ name: 'x', features: 4 }],
      graph: [
        { op: 'linear', input: 'x', output: 'h', weight: 'l1.weight', bias: 'l1.bias' },
        { op: 'relu', input: 'h', output: 'a' },
        { op: 'linear', input: 'a', output: 'y', weight: 'l2.weight' },
      ],
      outputs: ['y'],
    },
    npu: { backend: 'AscendSimBackend', callable: 'orch.chipcallable', callableId: 3 },
  },
};

function failure(manifest: unknown): ModuleLoaderError {
  try {
    parseManifest(
      typeof manifest === 'string' ? manifest : JSON.stringify(manifest),
      'program.json',
    );
  } catch (error) {
    expect(error).toBeInstanceOf(ModuleLoaderError);
    return error as ModuleLoaderError;
  }
  throw new Error('expected the manifest to be rejected');
}

function withMethod(patch: Record<string, unknown>): unknown {
  return { ...valid, methods: { forward: { ...valid.methods.forward, ...patch } } };
}

describe('parseManifest', () => {
  test('reads graph and callable methods', () => {
    const manifest = parseManifest(JSON.stringify(valid), 'program.json');
    expect(manifest.weights).toEqual(['model.safetensors']);
    const forward = manifest.methods.get('forward');
    expect(forward?.kind).toBe('graph');
    expect(forward?.kind === 'graph' && forward.graph.length).toBe(3);
    expect(manifest.methods.get('npu')).toMatchObject({
      kind: 'callable',
      callableId: 3,
      orchestration: 'device',
    });
  });

  test('graph nodes hold their known fields only (extra keys dropped), clamp bounds renamed', () => {
    const manifest = parseManifest(
      JSON.stringify(
        withMethod({
          graph: [
            { note: 'kept out', output: 'h', op: 'linear', input: 'x', weight: 'w', bias: 'b' },
            { op: 'linear', input: 'h', output: 'y', weight: 'v', output_min: -1, output_max: 1 },
            { op: 'relu', input: 'y', output: 'r', extra: [1, 2] },
            { op: 'gelu', input: 'r', output: 'g' },
            { op: 'linear', input: 'g', output: 'z', weight: 'u' },
          ],
          outputs: ['z'],
        }),
      ),
      'program.json',
    );
    const forward = manifest.methods.get('forward');
    expect(forward?.kind === 'graph' && forward.graph).toStrictEqual([
      { op: 'linear', input: 'x', output: 'h', weight: 'w', bias: 'b' },
      { op: 'linear', input: 'h', output: 'y', weight: 'v', outputMin: -1, outputMax: 1 },
      { op: 'relu', input: 'y', output: 'r' },
      { op: 'gelu', input: 'r', output: 'g' },
      { op: 'linear', input: 'g', output: 'z', weight: 'u' },
    ]);
  });

  const rules: [string, unknown, string][] = [
    ['text that is not JSON', '{"format": ', '$'],
    ['a missing format tag', { ...valid, format: 'other' }, 'format'],
    ['an unknown version', { ...valid, version: 2 }, 'version'],
    ['weights that are not an array', { ...valid, weights: 'a.safetensors' }, 'weights'],
    ['no methods', { ...valid, methods: {} }, 'methods'],
    ['a method without backend', withMethod({ backend: undefined }), 'methods.forward.backend'],
    [
      'an input with zero features',
      withMethod({ inputs: [{ name: 'x', features: 0 }] }),
      'methods.forward.inputs[0].features',
    ],
    [
      'an unknown op',
      withMethod({ graph: [{ op: 'conv', input: 'x', output: 'y' }] }),
      'methods.forward.graph[0].op',
    ],
    [
      'a value used before it is defined',
      withMethod({ graph: [{ op: 'relu', input: 'q', output: 'y' }] }),
      'methods.forward.graph[0].input',
    ],
    [
      'a value defined twice',
      withMethod({ graph: [{ op: 'relu', input: 'x', output: 'x' }] }),
      'methods.forward.graph[0].output',
    ],
    [
      'a linear node without weight',
      withMethod({ graph: [{ op: 'linear', input: 'x', output: 'y' }] }),
      'methods.forward.graph[0].weight',
    ],
    ['an output never computed', withMethod({ outputs: ['z'] }), 'methods.forward.outputs[0]'],
    [
      'a negative callable id',
      { ...valid, methods: { npu: { ...valid.methods.npu, callableId: -1 } } },
      'methods.npu.callableId',
    ],
    [
      'an unknown orchestration',
      { ...valid, methods: { npu: { ...valid.methods.npu, orchestration: 'gpu' } } },
      'methods.npu.orchestration',
    ],
    [
      'a graph node that is not an object',
      withMethod({ graph: [null] }),
      'methods.forward.graph[0]',
    ],
    [
      'a bias that is not a name',
      withMethod({ graph: [{ op: 'linear', input: 'x', output: 'y', weight: 'w', bias: '' }] }),
      'methods.forward.graph[0].bias',
    ],
    [
      'an output_max that is not a number',
      withMethod({
        graph: [{ op: 'linear', input: 'x', output: 'y', weight: 'w', output_max: 'big' }],
      }),
      'methods.forward.graph[0].output_max',
    ],
    [
      'an input no earlier node defines, after a branch',
      withMethod({
        graph: [
          { op: 'relu', input: 'x', output: 'a' },
          { op: 'relu', input: 'a', output: 'b' },
          { op: 'relu', input: 'x', output: 'c' },
          { op: 'gelu', input: 'd', output: 'y' },
        ],
      }),
      'methods.forward.graph[3].input',
    ],
    [
      'an output that redefines an earlier output',
      withMethod({
        graph: [
          { op: 'relu', input: 'x', output: 'a' },
          { op: 'relu', input: 'a', output: 'b' },
          { op: 'relu', input: 'b', output: 'a' },
        ],
      }),
      'methods.forward.graph[2].output',
    ],
    [
      'a weights entry that is not a name',
      { ...valid, weights: ['model.safetensors', 3] },
      'weights[1]',
    ],
    [
      'a compile spec that is an object',
      withMethod({ compileSpecs: { a: {} } }),
      'methods.forward.compileSpecs.a',
    ],
  ];
  test.each(rules)('rejects %s, naming file and field', (_name, manifest, field) => {
    const error = failure(manifest);
    expect(error.code).toBe('ERR_MANIFEST_INVALID');
    expect(error.file).toBe('program.json');
    expect(error.field).toBe(field);
  });

  test('fuzz: arbitrary JSON values and mutated manifests only raise ModuleLoaderError', () => {
    const text = JSON.stringify(valid);
    const mutated = fc
      .array(
        fc.tuple(
          fc.nat(text.length - 1),
          fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }),
        ),
        { maxLength: 6 },
      )
      .map((edits) => {
        const chars = [...text];
        for (const [at, char] of edits) chars[at] = char;
        return chars.join('');
      });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.json(),
          mutated,
          fc.jsonValue().map((value) => JSON.stringify({ ...valid, methods: { m: value } })),
        ),
        (input) => {
          try {
            parseManifest(input, 'program.json');
          } catch (error) {
            if (!(error instanceof ModuleLoaderError)) throw error;
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});

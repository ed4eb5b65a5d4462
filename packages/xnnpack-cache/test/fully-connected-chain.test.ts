// fullyConnectedChain: native operators run as one give the bits of running them one by
// one, on a file-backed cache, for batches and threads; null where an operator runs the
// JavaScript kernel or the cache is not finalized; the checks of its runs.
import { describe, expect, it } from 'vitest';
import {
  createFullyConnectedNcF32,
  type FullyConnectedOperator,
  fullyConnectedChain,
  InMemoryNamedDataMap,
  type KernelChoice,
  tensorView,
  XNNWeightsCache,
} from '../src/index.js';
import { makeTempDir } from './file-helpers.js';
import { randomFloats } from './reference.js';

interface Built {
  cache: XNNWeightsCache;
  operators: FullyConnectedOperator[];
  cleanup: () => void;
}

/** Layers widths[i] → widths[i + 1] in a file-backed cache, ReLU fused but in the last. */
function build(widths: readonly number[], kernels: KernelChoice = 'native', threads = 1): Built {
  const { dir, cleanup } = makeTempDir();
  const cache = new XNNWeightsCache({ path: `${dir}/cache.xnnc` });
  const tensors = widths.slice(1).flatMap((nc, i) => {
    const kc = widths[i] as number;
    return [
      tensorView(`w${i}`, [nc, kc], randomFloats(nc * kc, 17 * i + 1)),
      tensorView(`b${i}`, [nc], randomFloats(nc, 17 * i + 2)),
    ];
  });
  cache.initializeForRuntime(new InMemoryNamedDataMap(tensors));
  const operators = widths.slice(1).map((nc, i) =>
    createFullyConnectedNcF32({
      cache,
      inputChannels: widths[i] as number,
      outputChannels: nc,
      kernel: cache.loadUnpackedData(`w${i}`),
      bias: cache.loadUnpackedData(`b${i}`),
      ...(i + 2 < widths.length ? { outputMin: 0 } : {}),
      kernels,
      threads,
    }),
  );
  cache.finalizeForRuntime();
  return {
    cache,
    operators,
    cleanup: () => {
      cache.close();
      cleanup();
    },
  };
}

function oneByOne(operators: readonly FullyConnectedOperator[], input: Float32Array, rows: number) {
  let x = input;
  for (const operator of operators) x = operator.run(x, rows);
  return x;
}

const bits = (a: Float32Array) => new Uint32Array(a.buffer, a.byteOffset, a.length);

describe('fullyConnectedChain', () => {
  it.each([1, 2])('runs as its operators one by one, bit for bit, on %i threads', (threads) => {
    const { operators, cleanup } = build([48, 128, 128, 128, 20, 7], 'native', threads);
    try {
      const chain = fullyConnectedChain(operators);
      expect(chain).not.toBeNull();
      if (chain === null) return;
      expect([chain.inputChannels, chain.outputChannels, chain.layerCount]).toEqual([48, 7, 5]);
      for (const rows of [1, 7, 64, 1]) {
        const input = randomFloats(rows * 48, rows);
        expect(bits(chain.run(input, rows)), `batch ${rows}`).toEqual(
          bits(oneByOne(operators, input, rows)),
        );
      }
      // Into the output given, which may be the input itself.
      const shared = new Float32Array(3 * 48);
      shared.set(randomFloats(3 * 48, 5));
      const expected = oneByOne(operators, shared.slice(), 3);
      expect(chain.run(shared, 3, shared)).toBe(shared);
      expect(bits(shared.subarray(0, 21))).toEqual(bits(expected));
    } finally {
      cleanup();
    }
  });

  it('is null when an operator runs the JavaScript kernel', () => {
    const { operators, cleanup } = build([8, 16, 4], 'javascript');
    try {
      expect(fullyConnectedChain(operators)).toBeNull();
      expect(fullyConnectedChain([{ ...(operators[0] as FullyConnectedOperator) }])).toBeNull();
    } finally {
      cleanup();
    }
  });

  it('is null before its cache is finalized, and refuses to run while it is not', () => {
    const { cache, operators, cleanup } = build([8, 16, 4]);
    try {
      const chain = fullyConnectedChain(operators);
      cache.initializeForRuntime(new InMemoryNamedDataMap([]));
      expect(fullyConnectedChain(operators)).toBeNull();
      expect(() => chain?.run(new Float32Array(8), 1)).toThrowError(
        expect.objectContaining({ code: 'ERR_CACHE_INVALID_STATE' }),
      );
      cache.finalizeForRuntime();
      expect(bits(chain?.run(new Float32Array(8), 1) as Float32Array)).toEqual(
        bits(oneByOne(operators, new Float32Array(8), 1)),
      );
    } finally {
      cleanup();
    }
  });

  it('fails as its operators do once the cache is closed', () => {
    const { cache, operators, cleanup } = build([8, 16, 4]);
    try {
      const chain = fullyConnectedChain(operators);
      chain?.run(new Float32Array(8), 1);
      cache.close();
      const codeOf = (fn: () => unknown) => {
        try {
          fn();
        } catch (error) {
          return (error as { code?: string }).code;
        }
        return 'no error';
      };
      const code = codeOf(() =>
        (operators[0] as FullyConnectedOperator).run(new Float32Array(8), 1),
      );
      expect(code).not.toBe('no error');
      expect(codeOf(() => chain?.run(new Float32Array(8), 1))).toBe(code);
    } finally {
      cleanup();
    }
  });

  it.each([
    ['no operators', () => fullyConnectedChain([])],
    [
      'operators that do not chain',
      (ops: FullyConnectedOperator[]) =>
        fullyConnectedChain([ops[0], ops[0]] as FullyConnectedOperator[]),
    ],
    [
      'a batch of 0',
      (ops: FullyConnectedOperator[]) => fullyConnectedChain(ops)?.run(new Float32Array(8), 0),
    ],
    [
      'an input too short',
      (ops: FullyConnectedOperator[]) => fullyConnectedChain(ops)?.run(new Float32Array(15), 2),
    ],
    [
      'an output too short',
      (ops: FullyConnectedOperator[]) =>
        fullyConnectedChain(ops)?.run(new Float32Array(16), 2, new Float32Array(7)),
    ],
  ])('refuses %s', (_, fn) => {
    const { operators, cleanup } = build([8, 16, 4]);
    try {
      expect(() => fn(operators)).toThrowError(
        expect.objectContaining({ code: 'ERR_CACHE_INVALID_ARGUMENT' }),
      );
    } finally {
      cleanup();
    }
  });
});

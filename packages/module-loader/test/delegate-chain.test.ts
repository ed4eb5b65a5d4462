// A delegate of fully-connected layers in one line runs as one native chain: the same
// bits as running it node by node, at batch 1, 7 and 64, on 1 and 2 threads, from a heap
// and a file-backed cache. Other delegates (a standalone clamp, a GELU tail) keep running
// node by node, and a destroyed method drops its chain.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadGemmKernels } from '@memlayer/mmap-native';
import { XNNWeightsCacheManager } from '@memlayer/xnnpack-cache';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { executeDelegate } from '../src/backends/xnnpack-delegate.js';
import {
  BackendRegistry,
  Module,
  type Tensor,
  XnnpackBackend,
  type XnnpackDelegateHandle,
} from '../src/index.js';
import { cacheOptions } from './fixtures.js';
import { makeLayers, writeMlp } from './pte-fixtures.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'delegate-chain-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const input = (rows: number, features: number) =>
  Float32Array.from({ length: rows * features }, (_, i) => Math.sin(i + 1) / 2);

const bits = (data: Float32Array | undefined) =>
  data === undefined ? [] : [...new Uint32Array(data.buffer, data.byteOffset, data.length)];

function load(pte: string, ptd: string | null, threads: number, cachePath?: string) {
  const registry = new BackendRegistry().register(
    new XnnpackBackend({ caches: new XNNWeightsCacheManager() }),
  );
  const module = new Module(pte, { registry, dataFiles: ptd === null ? [] : [ptd], threads });
  module.load(cachePath === undefined ? undefined : cacheOptions(cachePath));
  module.loadMethod('forward');
  return { module, handle: module.methodHandle('forward') as XnnpackDelegateHandle };
}

/** The delegate run node by node, on the same handle (its operators and workspace). */
function nodeByNode(handle: XnnpackDelegateHandle, tensor: Tensor): Tensor | undefined {
  const { graph, operators, intermediates } = handle;
  return executeDelegate(graph, operators, intermediates, [tensor, undefined], null)[1];
}

describe('a line of fully-connected layers', () => {
  test.each([
    [1, 'heap'],
    [2, 'heap'],
    [1, 'file'],
    [2, 'file'],
  ])(
    'runs as one chain on %i threads (%s cache), with the bits of node by node',
    (threads, cache) => {
      // The addon is built where the tests run: the chain must be taken, not skipped.
      expect(loadGemmKernels()).not.toBeNull();
      const layers = makeLayers([48, 128, 128, 96, 128, 10]);
      const { pte, ptd } = writeMlp(dir, 'line', layers);
      const { module, handle } = load(
        pte,
        ptd,
        threads,
        cache === 'file' ? join(dir, 'weights.xnnc') : undefined,
      );
      for (const rows of [1, 7, 64, 7]) {
        const tensor = { shape: [rows, 48] as [number, number], data: input(rows, 48) };
        const [chained] = module.execute('forward', [tensor]);
        expect(handle.chain.of(handle.operators)).not.toBeNull();
        const single = nodeByNode(handle, tensor);
        expect(chained?.shape).toEqual([rows, 10]);
        expect(single?.shape).toEqual([rows, 10]);
        expect(bits(chained?.data), `batch ${rows}`).toEqual(bits(single?.data));
      }
      module.dispose();
      expect(handle.chain.of(handle.operators)).toBeNull();
    },
  );

  test('outputs of earlier runs are the caller’s: later runs leave them as they were', () => {
    const { pte, ptd } = writeMlp(dir, 'kept', makeLayers([8, 16, 16, 4]));
    const { module } = load(pte, ptd, 1);
    const [first] = module.execute('forward', [{ shape: [3, 8], data: input(3, 8) }]);
    const kept = bits(first?.data);
    module.execute('forward', [{ shape: [3, 8], data: input(3, 8).map((x) => -x) }]);
    expect(bits(first?.data)).toEqual(kept);
    module.dispose();
  });
});

describe('other delegates run node by node', () => {
  test.each([
    ['a standalone clamp', () => makeLayers([8, 16, 4], 3, 'clamp'), {}],
    ['a GELU after the last layer', () => makeLayers([8, 16, 4], 3), { tail: 42 }],
  ])('%s', (_, layers, options) => {
    const { pte, ptd } = writeMlp(dir, 'other', layers(), options);
    const { module, handle } = load(pte, ptd, 1);
    const tensor = { shape: [2, 8] as [number, number], data: input(2, 8) };
    const [output] = module.execute('forward', [tensor]);
    expect(handle.chain.of(handle.operators)).toBeNull();
    const outputId = handle.graph.outputIds[0] as number;
    const single = executeDelegate(
      handle.graph,
      handle.operators,
      handle.intermediates,
      [tensor, undefined],
      null,
    )[handle.graph.externalId[outputId] as number];
    expect(bits(output?.data)).toEqual(bits(single?.data));
    module.dispose();
  });
});

// Without the native kernels (a machine without the addon: loadGemmKernels gives null),
// operators run the JavaScript kernel and a line of layers runs node by node, as before.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { Module, type XnnpackDelegateHandle } from '../src/index.js';
import { makeLayers, reference, writeMlp } from './pte-fixtures.js';

vi.mock('@memlayer/mmap-native', async (original) => ({
  ...(await original<typeof import('@memlayer/mmap-native')>()),
  loadGemmKernels: () => null,
}));

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'delegate-chain-js-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('a line of layers on the JavaScript kernel runs node by node', () => {
  const layers = makeLayers([8, 16, 16, 4]);
  const { pte, ptd } = writeMlp(dir, 'line', layers);
  const module = new Module(pte, { dataFiles: [ptd as string] });
  module.loadMethod('forward');
  const handle = module.methodHandle('forward') as XnnpackDelegateHandle;
  const data = Float32Array.from({ length: 3 * 8 }, (_, i) => Math.sin(i + 1));
  const [output] = module.execute('forward', [{ shape: [3, 8], data }]);
  expect(handle.operators.get(0)?.kernels).toBe('javascript');
  expect(handle.chain.of(handle.operators)).toBeNull();
  // The JavaScript kernel sums in float64, as the reference does.
  expect([...(output?.data ?? [])]).toEqual([...reference(layers, data, 3)]);
  module.dispose();
});

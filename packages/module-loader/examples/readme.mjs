import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BackendOptions,
  createDefaultRegistry,
  encodeSafetensors,
  LoadBackendOptionsMap,
  Module,
} from '@memlayer/module-loader';

// A tiny program: y = relu(x W^T + b), W is [2, 4], written into a temp folder.
const dir = mkdtempSync(join(tmpdir(), 'memlayer-example-'));
const weight = Float32Array.of(1, 0, 0, 0, 0, 1, 1, -1);
writeFileSync(
  join(dir, 'model.safetensors'),
  encodeSafetensors([
    { name: 'fc.weight', shape: [2, 4], data: weight },
    { name: 'fc.bias', shape: [2], data: Float32Array.of(0.5, -10) },
  ]),
);
writeFileSync(
  join(dir, 'program.json'),
  JSON.stringify({
    format: 'memlayer-program',
    version: 1,
    weights: ['model.safetensors'],
    methods: {
      forward: {
        backend: 'XnnpackBackend',
        inputs: [{ name: 'x', features: 4 }],
        graph: [
          { op: 'linear', input: 'x', output: 'h', weight: 'fc.weight', bias: 'fc.bias' },
          { op: 'relu', input: 'h', output: 'y' },
        ],
        outputs: ['y'],
      },
    },
  }),
);

const options = new LoadBackendOptionsMap().setOptions(
  'XnnpackBackend',
  new BackendOptions().setOption('packed_cache_path', join(dir, 'model.xpwc')),
);
const registry = createDefaultRegistry(); // XNNPACK gets one weights cache per packed_cache_path
const module = new Module(join(dir, 'program.json'), { registry });
module.load(options); // the Module keeps its own copy: `options` may change or go away now
const [y] = module.execute('forward', [{ shape: [1, 4], data: Float32Array.of(1, 2, 3, 4) }]);
console.log('y =', Array.from(y.data)); // y = [ 1.5, 0 ]
module.dispose(); // drops cache references and device buffers, unmaps the weights
console.log('cache file written:', existsSync(join(dir, 'model.xpwc'))); // true
rmSync(dir, { recursive: true, force: true });

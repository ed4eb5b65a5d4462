import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createFullyConnectedNcF32,
  InMemoryNamedDataMap,
  tensorView,
  XNNWeightsCacheManager,
} from '@memlayer/xnnpack-cache';

// Unpacked weights, [out][in] row-major. A runtime names them by content (ExecuTorch: the
// SHA-256 of their bytes); any stable name works here.
const weight = Float32Array.from({ length: 256 * 128 }, (_, i) => Math.sin(i) / 16);
const bias = Float32Array.from({ length: 256 }, (_, i) => i / 256);
const weights = new InMemoryNamedDataMap([
  tensorView('fc.weight', [256, 128], weight),
  tensorView('fc.bias', [256], bias),
]);

const dir = mkdtempSync(join(tmpdir(), 'xnnpack-cache-example-'));
const cachePath = join(dir, 'model.xpwc'); // '' would mean heap only
try {
  // Two starts of the same model, as two processes would do: the first packs into the
  // file, the second finds every layer there and packs nothing.
  for (const start of ['cold', 'warm']) {
    const manager = new XNNWeightsCacheManager(); // one cache instance per path
    const handle = manager.acquire(cachePath);
    const { cache } = handle;
    cache.initializeForRuntime(weights);
    const op = createFullyConnectedNcF32({
      cache,
      inputChannels: 128,
      outputChannels: 256,
      kernel: cache.loadUnpackedData('fc.weight'),
      bias: cache.loadUnpackedData('fc.bias'),
    });
    const names = cache.finalizeForRuntime(); // the references this runtime holds
    const y = op.run(new Float32Array(4 * 128).fill(0.5), 4); // y = x·Wᵀ + b, 4 rows
    console.log(`${start}: cache hit ${op.cacheHit}, y[0] = ${y[0].toFixed(4)}`);
    cache.deletePackedData(names); // the runtime goes away
    handle.release(); // the last holder commits the index, closes the file and unmaps it
  }
  console.log(`cache file: ${statSync(cachePath).size} bytes`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// memlayer's side of a child: import @memlayer/module-loader (timed: nothing imported it
// before), then Module + load + loadMethod of the .pte with a file-backed packed cache.
import { nowMs } from '../measure.js';
import type { OpenedModel } from './opened-model.js';
import type { MemlayerStart } from './protocol.js';

const METHOD = 'forward';

export async function openMemlayer(start: MemlayerStart): Promise<OpenedModel> {
  const importStart = nowMs();
  const loader = await import('@memlayer/module-loader');
  const importMs = nowMs() - importStart;
  const readyStart = nowMs();
  // cache-options.ts builds this map too, but importing it would load the package before
  // the timed import.
  const options = new loader.LoadBackendOptionsMap().setOptions(
    'XnnpackBackend',
    new loader.BackendOptions().setOption('packed_cache_path', start.cachePath),
  );
  // `threads` is passed only when the caller found the option accepted (threads-option.ts).
  const config = {
    dataFiles: [start.ptd],
    ...(start.threads === undefined ? {} : { threads: start.threads }),
  };
  const module = new loader.Module(start.pte, config);
  module.load(options);
  module.loadMethod(METHOD);
  const readyMs = nowMs() - readyStart;
  return {
    importMs,
    readyMs,
    async forward(input, batch) {
      const [output] = module.execute(METHOD, [
        { shape: [batch, input.length / batch], data: input },
      ]);
      return output?.data ?? new Float32Array(0);
    },
    async close() {
      // Completes the cache file's commit if a cold start's is still running.
      module.dispose();
    },
  };
}

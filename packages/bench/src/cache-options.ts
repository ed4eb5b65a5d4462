import { BackendOptions, LoadBackendOptionsMap } from '@memlayer/module-loader';

/**
 * The options map of a file-backed XNNPACK start at `path`; `saveNow` also sets
 * save_weight_cache_on_disk (the cache is durable before the method is runnable).
 */
export function cacheOptions(path: string, saveNow = false): LoadBackendOptionsMap {
  const options = new BackendOptions().setOption('packed_cache_path', path);
  if (saveNow) options.setOption('save_weight_cache_on_disk', true);
  return new LoadBackendOptionsMap().setOptions('XnnpackBackend', options);
}

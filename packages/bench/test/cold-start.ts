import { createDefaultRegistry, Module } from '@memlayer/module-loader';
import { cacheOptions } from '../src/cache-options.js';

/** A cold start of `program`'s forward method into the cache file at `cachePath`. */
export function coldStart(program: string, cachePath: string): void {
  const module = new Module(program, { registry: createDefaultRegistry() });
  module.load(cacheOptions(cachePath));
  module.loadMethod('forward');
  module.dispose();
}

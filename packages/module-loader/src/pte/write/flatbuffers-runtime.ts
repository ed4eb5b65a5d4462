import { createRequire } from 'node:module';

/** The `flatbuffers` npm runtime (its `main` is CommonJS, so `require` can load it on demand). */
export type FlatbuffersRuntime = typeof import('flatbuffers');
export type FlatbufferBuilder = InstanceType<FlatbuffersRuntime['Builder']>;

/**
 * A new flatbuffer Builder. `flatbuffers` is loaded here, on the first file written, never
 * when the package is imported: reading programs does not need it.
 */
export function newFlatbufferBuilder(initialSize = 1024): FlatbufferBuilder {
  const { Builder } = createRequire(import.meta.url)('flatbuffers') as FlatbuffersRuntime;
  return new Builder(initialSize);
}

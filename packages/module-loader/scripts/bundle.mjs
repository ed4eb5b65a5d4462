// After tsc: dist/index.js becomes one file with this package's modules (the .pte writer,
// loaded by exportProgram's first call, is a chunk of its own). Node 20 loads an ES module
// in ~0.3 ms, so the ~40 small files a program needs cost more to import than the code
// they hold; the sources stay small files and tests run on them. Other packages stay
// imports (they are loaded on first use, see src/deferred/), and so do Node's modules.
// Only the .d.ts files, the bundle and its chunks are kept in dist.
import { readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { build } from 'esbuild';

const dist = join(import.meta.dirname, '..', 'dist');

const result = await build({
  entryPoints: [join(dist, 'index.js')],
  outdir: dist,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  metafile: true,
  logLevel: 'warning',
});

const kept = new Set(Object.keys(result.metafile.outputs).map((file) => join(process.cwd(), file)));
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  const path = join(entry.parentPath, entry.name);
  if (entry.isFile() && /\.js(\.map)?$/.test(entry.name) && !kept.has(path)) rmSync(path);
}
console.log(
  `bundled ${relative(process.cwd(), dist)}: ${[...kept].map((f) => relative(dist, f)).join(', ')}`,
);

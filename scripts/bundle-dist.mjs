#!/usr/bin/env node
// After tsc, in a package's folder: `node ../../scripts/bundle-dist.mjs index.js [more.js …]`
// makes each given entry of dist/ one file holding the package's own modules it imports
// (code shared by entries, or loaded by an `await import()`, goes to dist/chunks/). Node
// 20 loads an ES module in ~0.3–0.5 ms, so a package of dozens of small files costs more to
// import than the code they hold; the sources stay small files and tests run on them
// (memlayer-source condition). Other packages and Node's modules stay imports, so each
// package is still one instance, whoever imports it. tsc's .d.ts files are kept as they
// are (exports' `types`); every other .js of dist/ is removed, so a tarball ships only
// what the bundles load. Source maps chain back to src/ through tsc's.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { build } from 'esbuild';

const entries = process.argv.slice(2);
if (entries.length === 0) {
  console.error('usage: node bundle-dist.mjs <entry of dist/, e.g. index.js> [more entries]');
  process.exit(2);
}
const dist = join(process.cwd(), 'dist');

const result = await build({
  entryPoints: entries.map((entry) => join(dist, entry)),
  outdir: dist,
  outbase: dist,
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  // Not the package's tsconfig.json: its `paths` point the package's own name at src/
  // (for type-checking bench sections), which would bundle a second copy of the package.
  tsconfigRaw: {},
  sourcemap: true,
  metafile: true,
  write: false,
  logLevel: 'warning',
});

// Only this package's built files: anything else would be a second instance of a module.
const foreign = Object.keys(result.metafile.inputs).filter((file) =>
  relative(dist, join(process.cwd(), file)).startsWith('..'),
);
if (foreign.length > 0) {
  console.error(`bundle-dist: files from outside dist/ would be bundled: ${foreign.join(', ')}`);
  process.exit(1);
}

for (const { path, contents } of result.outputFiles) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, contents);
}
const kept = new Set(result.outputFiles.map(({ path }) => path));
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  const path = join(entry.parentPath, entry.name);
  if (entry.isFile() && /\.js(\.map)?$/.test(entry.name) && !kept.has(path)) rmSync(path);
}
console.log(
  `bundled ${relative(process.cwd(), dist)}: ${[...kept].map((f) => relative(dist, f)).join(', ')}`,
);

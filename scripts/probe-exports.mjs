#!/usr/bin/env node
// Run in a package's folder, in a fresh process: imports every subpath of the package's
// `exports` (its own name, so Node resolves it as a user's import would: dist/, or src/
// with --conditions=memlayer-source and tsx) and prints one JSON line: each subpath's
// export names, and the files of memlayer packages that this loaded (as "<package>/<path>").
// Tests compare the build with the sources and check that each package loads as one file.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { recordImports } from './record-imports.mjs';

const { urls: loaded, settled } = recordImports();

const manifestPath = join(process.cwd(), 'package.json');
const { name, exports } = JSON.parse(readFileSync(manifestPath, 'utf8'));
const resolve = createRequire(manifestPath).resolve;
const subpaths = {};
for (const subpath of Object.keys(exports).filter((key) => key !== './package.json')) {
  const module = await import(pathToFileURL(resolve(`${name}${subpath.slice(1)}`)).href);
  subpaths[subpath] = Object.keys(module).sort();
}
await settled();

const files = [
  ...new Set(
    loaded
      .map((url) => /\/(?:packages|node_modules\/@memlayer)\/([a-z0-9-]+)\/(.+)$/.exec(url))
      .filter((match) => match !== null)
      .map(([, pkg, path]) => `${pkg}/${path}`),
  ),
].sort();
console.log(JSON.stringify({ subpaths, files }));

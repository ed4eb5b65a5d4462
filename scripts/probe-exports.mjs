#!/usr/bin/env node
// Run in a package's folder, in a fresh process: imports every subpath of the package's
// `exports` (its own name, so Node resolves it as a user's import would: dist/, or src/
// with --conditions=memlayer-source and tsx) and prints one JSON line: each subpath's
// export names, and the files of memlayer packages that this loaded (as "<package>/<path>").
// Tests compare the build with the sources and check that each package loads as one file.
import { readFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MessageChannel } from 'node:worker_threads';

const { port1, port2 } = new MessageChannel();
const loaded = [];
port1.on('message', (url) => loaded.push(url));
port1.unref();
register(
  `data:text/javascript,${encodeURIComponent(
    'let port; export function initialize(data) { port = data.port; }' +
      'export async function load(url, context, next) { port.postMessage(url); return next(url, context); }',
  )}`,
  { data: { port: port2 }, transferList: [port2] },
);

const manifestPath = join(process.cwd(), 'package.json');
const { name, exports } = JSON.parse(readFileSync(manifestPath, 'utf8'));
const resolve = createRequire(manifestPath).resolve;
const subpaths = {};
for (const subpath of Object.keys(exports).filter((key) => key !== './package.json')) {
  const module = await import(pathToFileURL(resolve(`${name}${subpath.slice(1)}`)).href);
  subpaths[subpath] = Object.keys(module).sort();
}
// The hook reports from its own thread: let its last messages arrive.
await new Promise((done) => setTimeout(done, 50));

const files = [
  ...new Set(
    loaded
      .map((url) => /\/(?:packages|node_modules\/@memlayer)\/([a-z0-9-]+)\/(.+)$/.exec(url))
      .filter((match) => match !== null)
      .map(([, pkg, path]) => `${pkg}/${path}`),
  ),
].sort();
console.log(JSON.stringify({ subpaths, files }));

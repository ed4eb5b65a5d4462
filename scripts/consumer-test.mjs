#!/usr/bin/env node
// Installs every package the way a user gets it from npm: `pnpm pack` (which runs prepack:
// the build), then for each package an empty folder outside the workspace, plain
// `npm install` of its tarball (and of the tarballs of its @memlayer dependencies, which a
// user would get from the registry), then runs the package's README example
// (examples/readme.mjs, which the README shows verbatim).
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const packagesDir = join(root, 'packages');
const work = mkdtempSync(join(tmpdir(), 'memlayer-consumer-'));
const tarballs = join(work, 'tarballs');
const quiet = { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' };

function run(command, args, options) {
  try {
    return execFileSync(command, args, { ...quiet, ...options });
  } catch (error) {
    const output = `${error.stdout ?? ''}${error.stderr ?? ''}`.trim().split('\n').slice(-30);
    throw new Error(`${command} ${args.join(' ')} failed:\n${output.join('\n')}`);
  }
}

const manifests = new Map();
for (const dir of readdirSync(packagesDir)) {
  const manifestPath = join(packagesDir, dir, 'package.json');
  if (!existsSync(manifestPath)) continue;
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  if (manifest.private) continue;
  manifests.set(manifest.name, { dir: join(packagesDir, dir), manifest });
}

const tarballOf = new Map();
for (const [name, { dir }] of manifests) {
  const out = run('pnpm', ['pack', '--pack-destination', tarballs], { cwd: dir });
  const file = out.trim().split('\n').pop();
  tarballOf.set(name, resolve(dir, file));
}

/** The package and every @memlayer package it depends on, transitively. */
function closure(name, seen = new Set()) {
  if (seen.has(name)) return seen;
  seen.add(name);
  const deps = manifests.get(name)?.manifest.dependencies ?? {};
  for (const dep of Object.keys(deps)) if (manifests.has(dep)) closure(dep, seen);
  return seen;
}

/** The installed package points only at files it ships: no private source condition, no maps. */
function assertPublishable(installed) {
  const { exports } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  if (JSON.stringify(exports).includes('memlayer-source')) {
    throw new Error('its exports still name the private memlayer-source condition');
  }
  if (!existsSync(join(installed, 'dist'))) throw new Error('the tarball has no dist/');
  const maps = readdirSync(join(installed, 'dist'), { recursive: true }).filter((file) =>
    String(file).endsWith('.map'),
  );
  if (maps.length > 0) throw new Error(`the tarball ships ${maps.length} source maps`);
}

/** Each command the package installs prints the version of the package.json it shipped with. */
function assertBinVersions(consumer, manifest) {
  const bins = typeof manifest.bin === 'string' ? { [manifest.name]: manifest.bin } : manifest.bin;
  for (const command of Object.keys(bins ?? {})) {
    const output = run(join(consumer, 'node_modules', '.bin', command), ['--version'], {
      cwd: consumer,
    });
    if (!output.includes(manifest.version)) {
      throw new Error(`\`${command} --version\` printed ${JSON.stringify(output.trim())}`);
    }
  }
}

let passed = 0;
let failed = 0;
for (const [name, { dir, manifest }] of manifests) {
  const consumer = mkdtempSync(join(work, `${name.replace('@memlayer/', '')}-`));
  try {
    writeFileSync(
      join(consumer, 'package.json'),
      JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    );
    const install = [...closure(name)].map((dep) => tarballOf.get(dep));
    run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...install], {
      cwd: consumer,
    });
    assertPublishable(join(consumer, 'node_modules', name));
    assertBinVersions(consumer, manifest);
    const example = join(dir, 'examples', 'readme.mjs');
    if (!existsSync(example))
      throw new Error('no examples/readme.mjs (the README example as a file)');
    const code = readFileSync(example, 'utf8');
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    if (!readme.includes(code.trim())) {
      throw new Error(`${name}: README.md does not show examples/readme.mjs verbatim`);
    }
    cpSync(example, join(consumer, 'readme.mjs'));
    const output = run(process.execPath, ['readme.mjs'], { cwd: consumer });
    console.log(
      `ok ${name}: installed alone, README example ran (${output.trim().split('\n').length} lines of output)`,
    );
    passed++;
  } catch (error) {
    console.log(`FAIL ${name}: ${error.message}`);
    failed++;
  }
}
rmSync(work, { recursive: true, force: true });
console.log(`consumer: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

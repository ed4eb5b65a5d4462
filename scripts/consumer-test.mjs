#!/usr/bin/env node
// Installs every package the way a user gets it from the registry: `pnpm pack` (which runs
// prepack: the build), then for each package two empty folders outside the workspace, one
// `npm install` and one `pnpm add` of its tarball (and of the tarballs of its @memlayer
// dependencies, optional ones included, which a user would get from the registry), then
// runs the package's README example (examples/readme.mjs, which the README shows verbatim).
// An install or an example that prints a warning fails: users see every one of them.
import { spawnSync } from 'node:child_process';
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
const PNPM = ['-y', 'pnpm@12.21.0'];
// npm, pnpm and Node all say "warn"/"WARN"/"Warning"; an empty line of "0 warnings" is none.
const WARNING = /\bwarn(ing)?\b/i;

function run(command, args, options) {
  const result = spawnSync(command, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.status !== 0) {
    const tail = output.trim().split('\n').slice(-30).join('\n');
    throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status}):\n${tail}`);
  }
  return { stdout: result.stdout, stderr: result.stderr, output };
}

/** `what` printed nothing that looks like a warning. */
function assertNoWarnings(what, output) {
  const warnings = output.split('\n').filter((line) => WARNING.test(line));
  if (warnings.length > 0) throw new Error(`${what} warned:\n${warnings.join('\n')}`);
}

/** Whether this machine is one the package's os/cpu/libc fields allow (per-platform packages). */
function installableHere(manifest) {
  const libc =
    process.platform !== 'linux' ? null : existsSync('/etc/alpine-release') ? 'musl' : 'glibc';
  const fits = (field, value) => manifest[field] === undefined || manifest[field].includes(value);
  return fits('os', process.platform) && fits('cpu', process.arch) && fits('libc', libc);
}

const manifests = new Map();
for (const dir of readdirSync(packagesDir)) {
  const manifestPath = join(packagesDir, dir, 'package.json');
  if (!existsSync(manifestPath)) continue;
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  if (manifest.private) continue;
  if (!installableHere(manifest)) {
    console.log(`skip ${manifest.name}: not for ${process.platform}-${process.arch}`);
    continue;
  }
  manifests.set(manifest.name, { dir: join(packagesDir, dir), manifest });
}

const tarballOf = new Map();
for (const [name, { dir }] of manifests) {
  const { stdout } = run('npx', [...PNPM, 'pack', '--pack-destination', tarballs], { cwd: dir });
  tarballOf.set(name, resolve(dir, stdout.trim().split('\n').pop()));
}

/** The package and every @memlayer package it depends on (optionally too), transitively. */
function closure(name, seen = new Set()) {
  if (seen.has(name)) return seen;
  seen.add(name);
  const { dependencies = {}, optionalDependencies = {} } = manifests.get(name)?.manifest ?? {};
  for (const dep of Object.keys({ ...dependencies, ...optionalDependencies })) {
    if (manifests.has(dep)) closure(dep, seen);
  }
  return seen;
}

/** The installed package points only at files it ships: no private source condition, no maps. */
function assertPublishable(installed) {
  const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
  if (JSON.stringify(manifest.exports).includes('memlayer-source')) {
    throw new Error('its exports still name the private memlayer-source condition');
  }
  for (const hook of ['preinstall', 'install', 'postinstall']) {
    if (manifest.scripts?.[hook] !== undefined) throw new Error(`it has an ${hook} script`);
  }
  if (existsSync(join(installed, 'binding.gyp'))) {
    throw new Error('it ships binding.gyp at its root (npm and pnpm would build it at install)');
  }
  if (!manifest.files?.includes('dist')) return;
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
    const { stdout, output } = run(join(consumer, 'node_modules', '.bin', command), ['--version'], {
      cwd: consumer,
    });
    assertNoWarnings(`\`${command} --version\``, output);
    if (!stdout.includes(manifest.version)) {
      throw new Error(`\`${command} --version\` printed ${JSON.stringify(stdout.trim())}`);
    }
  }
}

/** An empty project folder; for pnpm, its @memlayer dependencies come from the tarballs. */
function emptyConsumer(name, client, deps) {
  const consumer = mkdtempSync(join(work, `${name.replace('@memlayer/', '')}-${client}-`));
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  if (client === 'pnpm') {
    // pnpm resolves a tarball's dependencies from the registry even when another tarball
    // of the same version is installed beside it (npm does not): overrides stand in for
    // the registry, as if these versions were published.
    const overrides = deps.map((dep) => `  '${dep}': 'file:${tarballOf.get(dep)}'`);
    writeFileSync(join(consumer, 'pnpm-workspace.yaml'), `overrides:\n${overrides.join('\n')}\n`);
  }
  return consumer;
}

const INSTALL = {
  npm: (files) => ['npm', ['install', '--no-audit', '--no-fund', ...files]],
  pnpm: (files) => ['npx', [...PNPM, 'add', ...files]],
};

let passed = 0;
let failed = 0;
for (const [name, { dir, manifest }] of manifests) {
  for (const client of ['npm', 'pnpm']) {
    try {
      const deps = [...closure(name)];
      const install = deps.map((dep) => tarballOf.get(dep));
      const consumer = emptyConsumer(name, client, deps);
      const [command, args] = INSTALL[client](install);
      assertNoWarnings(`${client} install`, run(command, args, { cwd: consumer }).output);
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
      const { stdout, stderr, output } = run(process.execPath, ['readme.mjs'], { cwd: consumer });
      assertNoWarnings('the README example', output);
      if (stderr.trim() !== '') throw new Error(`the README example wrote to stderr:\n${stderr}`);
      console.log(
        `ok ${name} (${client}): installed alone, no warnings, README example ran (${stdout.trim().split('\n').length} lines of output)`,
      );
      passed++;
    } catch (error) {
      console.log(`FAIL ${name} (${client}): ${error.message}`);
      failed++;
    }
  }
}
rmSync(work, { recursive: true, force: true });
console.log(`consumer: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

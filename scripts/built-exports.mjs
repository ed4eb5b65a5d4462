// For each package's built-exports test: runs probe-exports.mjs in a package's folder twice,
// in fresh processes, once on the build (dist/) and once on the sources (memlayer-source).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PROBE = fileURLToPath(new URL('probe-exports.mjs', import.meta.url));

function probe(packageDir, nodeFlags) {
  const child = spawnSync(process.execPath, [...nodeFlags, PROBE], {
    cwd: packageDir,
    encoding: 'utf8',
    timeout: 110_000,
  });
  if (child.status !== 0) {
    throw new Error(`probe-exports failed in ${packageDir} (${child.status}): ${child.stderr}`);
  }
  return JSON.parse(child.stdout.trim().split('\n').at(-1));
}

/** What the build's and the sources' `exports` subpaths export, and what each loaded. */
export function probeBuildAndSources(packageDir) {
  return {
    built: probe(packageDir, []),
    sources: probe(packageDir, ['--conditions=memlayer-source', '--import', 'tsx']),
  };
}

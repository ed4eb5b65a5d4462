#!/usr/bin/env node
// The tools a source build of the addon needs, looked up on PATH the way node-gyp and the
// Makefile it writes look them up: python3 (or $PYTHON), make (or $MAKE), g++ (or $CXX).
// Run as a script it exits 1 with one line naming what to install when any is missing
// (the root `test` script starts with it: the suite needs the addon built).
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The command in an environment variable such as CXX="ccache g++": its first word. */
function commandOf(value) {
  return value?.trim().split(/\s+/)[0] || undefined;
}

function runnable(command, env) {
  const candidates = isAbsolute(command)
    ? [command]
    : (env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, command));
  return candidates.some((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Names of the missing tools, in the words an install command would use. */
export function missingBuildTools(env = process.env) {
  const python = commandOf(env.PYTHON ?? env.npm_config_python);
  const make = commandOf(env.MAKE) ?? 'make';
  const cxx = commandOf(env.CXX) ?? 'g++';
  const missing = [];
  if (python ? !runnable(python, env) : !runnable('python3', env) && !runnable('python', env)) {
    missing.push('python3');
  }
  if (!runnable(make, env)) missing.push('make');
  if (!runnable(cxx, env)) missing.push(cxx === 'g++' ? 'g++' : `${cxx} (from CXX)`);
  return missing;
}

/** How to get them on Debian/Ubuntu (the images Node's own Docker images build on). */
export function installHint(missing) {
  const packages = missing.map((tool) => (tool.includes(' ') ? 'g++' : tool));
  return `apt-get install ${[...new Set(packages)].join(' ')}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const missing = missingBuildTools();
  if (missing.length > 0) {
    const purpose = process.argv[2] ?? 'building the native addon';
    console.error(
      `${purpose} needs python3, make and a C++ compiler; missing: ${missing.join(', ')} ` +
        `(Debian/Ubuntu: ${installHint(missing)}).`,
    );
    process.exit(1);
  }
}

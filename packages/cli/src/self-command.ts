import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * How to start this CLI in a fresh process: the built bin/memlayer.js when running from
 * dist/, or src/bin.ts through tsx when running from the TypeScript sources (tests), so a
 * child always runs the same code as its parent, never a stale build.
 */
export function selfCommand(): { command: string; args: string[] } {
  const here = fileURLToPath(import.meta.url);
  if (!here.endsWith('.ts')) {
    return {
      command: process.execPath,
      args: [fileURLToPath(new URL('../bin/memlayer.js', import.meta.url))],
    };
  }
  return {
    command: process.execPath,
    args: [
      '--import',
      // tsx is a devDependency of the workspace: source runs happen only there.
      pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href,
      '--conditions=memlayer-source',
      fileURLToPath(new URL('./bin.ts', import.meta.url)),
    ],
  };
}

import { readFileSync } from 'node:fs';

/** The package's own version, read from its package.json (src/ and dist/ sit beside it). */
export function cliVersion(): string {
  const manifest = JSON.parse(
    readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
  ) as { name: string; version: string };
  return `memlayer (${manifest.name} ${manifest.version})`;
}

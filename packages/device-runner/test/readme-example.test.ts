// The README example is examples/readme.mjs verbatim, and it runs.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const EXAMPLE = fileURLToPath(new URL('../examples/readme.mjs', import.meta.url));
const README = fileURLToPath(new URL('../README.md', import.meta.url));

test('the README example is examples/readme.mjs, verbatim', () => {
  const readme = readFileSync(README, 'utf8');
  const block = /## Example\n\n```js\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(block).toBe(readFileSync(EXAMPLE, 'utf8'));
});

test('examples/readme.mjs runs by the package name and prints what the README says', () => {
  const result = spawnSync(
    process.execPath,
    ['--conditions=memlayer-source', '--import', 'tsx', EXAMPLE],
    { encoding: 'utf8', timeout: 110_000 },
  );
  expect(result.status, result.stderr).toBe(0);
  expect(result.stdout).toBe(
    [
      'uploaded 10656 of 10656 bytes',
      'orch read in place: true',
      'func_ids bound: 0',
      'committed after unregister: 0',
      '',
    ].join('\n'),
  );
});

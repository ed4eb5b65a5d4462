// The README's example is examples/readme.mjs, verbatim, and it runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pageSize } from '../src/index.js';
import { makeTempDir, nodeArgs, packageDir, runChild } from './helpers.js';

describe('README example', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const example = join(packageDir, 'examples', 'readme.mjs');

  it('is pasted into the README unchanged', () => {
    const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
    expect(readme).toContain(`\`\`\`js\n${readFileSync(example, 'utf8')}\`\`\``);
  });

  it('runs on Node 20 against the package by its npm name', async () => {
    // The memlayer-source condition resolves the package name to src/ (no build needed);
    // TMPDIR keeps the example's file in this test's directory.
    const result = await runChild(
      process.execPath,
      nodeArgs(example, ['--conditions=memlayer-source']),
      { env: { ...process.env, TMPDIR: dir } },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`Uint8Array(3) [ 1, 2, 3 ]\n${16 * pageSize()} 1\n`);
  });
});

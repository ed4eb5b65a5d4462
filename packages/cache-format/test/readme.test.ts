// The README's Example section is examples/readme.mjs, verbatim.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('README', () => {
  it('shows examples/readme.mjs as its example', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const example = readFileSync(new URL('../examples/readme.mjs', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Example'));
    const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
    expect(code).toBe(example);
  });
});

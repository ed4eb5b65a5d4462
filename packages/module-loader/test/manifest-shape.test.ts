// A manifest's JSON shape is bounded before JSON.parse builds it: small hostile inputs
// (deep nesting, millions of empty arrays) are typed errors, not hundreds of MiB of heap.
import { describe, expect, it } from 'vitest';
import { ModuleLoaderError } from '../src/errors.js';
import {
  findJsonShapeProblem,
  MAX_JSON_CONTAINERS,
  MAX_JSON_DEPTH,
} from '../src/program/json-shape.js';
import { MAX_MANIFEST_BYTES, parseManifest } from '../src/program/manifest.js';

function codeAndMessage(text: string): { code: string; message: string } {
  try {
    parseManifest(text, 'p.json');
  } catch (error) {
    if (error instanceof ModuleLoaderError) return { code: error.code, message: error.message };
    throw error;
  }
  return { code: 'none', message: '' };
}

describe('manifest JSON shape', () => {
  it('deep nesting is refused before parsing', () => {
    const deep = '['.repeat(MAX_MANIFEST_BYTES - 1);
    const before = process.memoryUsage().heapUsed;
    const { code, message } = codeAndMessage(deep);
    expect(code).toBe('ERR_MANIFEST_INVALID');
    expect(message).toContain(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    // JSON.parse of this text alone would build ~16 million arrays (hundreds of MiB).
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(64 * 1024 * 1024);
  });

  it('millions of small containers are refused before parsing', () => {
    const many = `[${'[],'.repeat(5_000_000)}[]]`;
    expect(many.length).toBeLessThan(MAX_MANIFEST_BYTES);
    const { code, message } = codeAndMessage(many);
    expect(code).toBe('ERR_MANIFEST_INVALID');
    expect(message).toContain(`more than ${MAX_JSON_CONTAINERS} objects and arrays`);
  });

  it('brackets inside strings (escaped quotes included) do not count', () => {
    const name = `a\\"${'['.repeat(100)}`;
    expect(findJsonShapeProblem(`{"k": "${name}", "l": [[1], {"m": "]]]}"}]}`)).toBeNull();
    expect(
      findJsonShapeProblem(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`),
    ).toBeNull();
    expect(findJsonShapeProblem('['.repeat(MAX_JSON_DEPTH + 1))).toEqual({
      kind: 'depth',
      offset: MAX_JSON_DEPTH,
    });
  });

  it('a real manifest passes the shape check and parses', () => {
    const manifest = {
      format: 'memlayer-program',
      version: 1,
      weights: ['w.safetensors'],
      methods: {
        forward: {
          backend: 'XnnpackBackend',
          inputs: [{ name: 'x', features: 4 }],
          outputs: ['y'],
          graph: [{ op: 'linear', input: 'x', output: 'y', weight: 'w[0]"]' }],
        },
      },
    };
    expect(parseManifest(JSON.stringify(manifest), 'p.json').methods.size).toBe(1);
  });
});

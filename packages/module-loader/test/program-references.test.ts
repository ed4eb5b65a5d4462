// loadProgram('internal-consistency') checks every tensor a linear node names against the
// weights; 'minimal' leaves that to the method load.
import { readFileSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, test } from 'vitest';
import { loadProgram, ModuleLoaderError } from '../src/index.js';
import { type MlpFixture, writeMlpProgram } from './fixtures.js';

let fixture: MlpFixture | undefined;
afterEach(() => fixture?.cleanup());

function withNode(index: number, patch: Record<string, unknown>): string {
  fixture = writeMlpProgram();
  const manifest = JSON.parse(readFileSync(fixture.manifestPath, 'utf8'));
  Object.assign(manifest.methods.forward.graph[index], patch);
  writeFileSync(fixture.manifestPath, JSON.stringify(manifest));
  return fixture.manifestPath;
}

function referenceError(path: string): ModuleLoaderError {
  try {
    loadProgram(path, 'internal-consistency').close();
  } catch (error) {
    expect(error).toBeInstanceOf(ModuleLoaderError);
    return error as ModuleLoaderError;
  }
  throw new Error('expected the program to be rejected');
}

describe('loadProgram internal-consistency', () => {
  test('a program whose tensors all exist loads', () => {
    fixture = writeMlpProgram();
    const program = loadProgram(fixture.manifestPath, 'internal-consistency');
    expect(program.manifest.methods.get('forward')?.kind).toBe('graph');
    program.close();
  });

  test.each([
    ['weight', 0, { weight: 'missing.weight' }, 'methods.forward.graph[0].weight'],
    ['bias', 4, { bias: 'missing.bias' }, 'methods.forward.graph[4].bias'],
  ])('a missing %s is named by its JSON path', (_role, index, patch, field) => {
    const path = withNode(index, patch);
    const error = referenceError(path);
    expect(error.code).toBe('ERR_MANIFEST_INVALID');
    expect(error.file).toBe(path);
    expect(error.field).toBe(field);
    expect(error.message).toContain('missing.');
    // 'minimal' does not read the tables: the same program loads.
    loadProgram(path, 'minimal').close();
  });
});

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alignUp, readTrailer } from '@memlayer/cache-format';
import { XNNWeightsCache } from '../src/index.js';
import { buildModel, type ModelSpec, outputHashes } from './fixtures/model.js';

export const BACKENDS = ['posix', 'heap'] as const;
export type Backend = (typeof BACKENDS)[number];

export function makeTempDir(prefix = 'xnnpack-cache-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Collects the codes of process warnings until `stop()`; warnings arrive on the next tick. */
export function captureWarnings(): { codes: string[]; stop: () => Promise<string[]> } {
  const codes: string[] = [];
  const listener = (warning: Error & { code?: string }) => {
    codes.push(warning.code ?? warning.name);
  };
  process.on('warning', listener);
  return {
    codes,
    stop: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      process.off('warning', listener);
      return codes;
    },
  };
}

/** Output hashes of a model built on the heap: the reference every file-backed run must match. */
export function referenceHashes(spec: ModelSpec): string[] {
  const cache = new XNNWeightsCache();
  const { ops } = buildModel(cache, spec);
  const hashes = outputHashes(ops, spec.inputChannels);
  cache.close();
  return hashes;
}

/** Size a compacted v3 file must have: header + page-rounded live entries + trailer. */
export function compactSizeOf(path: string, page = 4096): { expected: number; actual: number } {
  const bytes = new Uint8Array(readFileSync(path));
  const { trailer } = readTrailer(bytes, bytes.byteLength);
  let data = 0;
  for (const entry of trailer.entries) data += alignUp(Math.max(entry.dataSize, 1), page);
  return {
    expected: 4096 + data + (trailer.trailerEnd - trailer.indexStart),
    actual: bytes.byteLength,
  };
}

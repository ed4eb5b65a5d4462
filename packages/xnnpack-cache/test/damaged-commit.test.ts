// A v3 file whose commit slot names a trailer that is now damaged (a flipped byte, media
// damage): the load says so instead of serving an empty or older cache silently.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTrailer } from '@memlayer/cache-format';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStorage, packingStats, resetPackingStats, XNNWeightsCache } from '../src/index.js';
import { captureWarnings, makeTempDir, referenceHashes } from './file-helpers.js';
import { buildModel, type ModelSpec, outputHashes, range } from './fixtures/model.js';

const SPEC: ModelSpec = { layers: range(0, 4), inputChannels: 64, outputChannels: 48 };

function run(path: string, spec: ModelSpec = SPEC) {
  resetPackingStats();
  const storage = new FileStorage({ path });
  const cache = new XNNWeightsCache({ storage });
  const { ops } = buildModel(cache, spec);
  const result = {
    packed: packingStats().calls,
    exact:
      JSON.stringify(outputHashes(ops, spec.inputChannels)) ===
      JSON.stringify(referenceHashes(spec)),
    info: storage.info(),
  };
  cache.close();
  return result;
}

/** Flips one byte inside the newest committed trailer. */
function damageNewestTrailer(path: string): void {
  const bytes = new Uint8Array(readFileSync(path));
  const { trailer } = readTrailer(bytes, bytes.byteLength);
  const at = trailer.indexStart + 8;
  bytes[at] = (bytes[at] as number) ^ 0x01;
  writeFileSync(path, bytes);
}

describe('a damaged committed trailer', () => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);

  it('of the only commit: the file is rebuilt, with a warning and rebuiltBecause', async () => {
    const path = join(dir, 'only.xpwc');
    expect(run(path).packed).toBe(4);
    damageNewestTrailer(path);
    const warnings = captureWarnings();
    const next = run(path);
    expect(await warnings.stop()).toContain('MEMLAYER_CACHE_REBUILT');
    expect(next.info.rebuiltBecause).toBe('ERR_XPWC_CHECKSUM');
    expect(next).toMatchObject({ packed: 4, exact: true });
    expect(run(path)).toMatchObject({ packed: 0, exact: true });
  });

  it('of the newest of two commits: the one before it is used, with a warning', async () => {
    const path = join(dir, 'newest.xpwc');
    run(path, { ...SPEC, layers: [0, 1] });
    run(path);
    damageNewestTrailer(path);
    const warnings = captureWarnings();
    const next = run(path);
    expect(await warnings.stop()).toContain('MEMLAYER_CACHE_DAMAGED_COMMIT');
    // Layers 0 and 1 come from the older commit; 2 and 3 are packed again.
    expect(next).toMatchObject({ packed: 2, exact: true });
    expect(next.info.loadedEntries).toBe(2);
  });
});

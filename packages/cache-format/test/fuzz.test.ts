// Fuzz property: random bytes and mutations of valid files (bit flips, truncations, length-field
// inflation, ...) never make anything but an XpwcFormatError escape. scripts/fuzz.ts runs the
// same cases at scale; this runs a few thousand on every test run.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readTrailer, XpwcFormatError } from '../src/index.js';
import { buildCorpus, fuzzOne, MUTATIONS, mutate, Rng } from './support/fuzz-kit.js';

const corpus = buildCorpus();
const { MEMLAYER_FUZZ_TEST_RUNS } = process.env;
const RUNS = Number(MEMLAYER_FUZZ_TEST_RUNS ?? 4000);

describe('fuzz', () => {
  it('the unmutated corpus produces no escapes', () => {
    for (const s of corpus) expect(fuzzOne(s.bytes)).toEqual([]);
  });

  it(`only XpwcFormatError escapes (${RUNS} cases)`, () => {
    fc.assert(
      fc.property(
        fc.nat({ max: corpus.length - 1 }),
        fc.constantFrom(...MUTATIONS),
        fc.integer(),
        (sampleIndex, kind, seed) => {
          const bytes = mutate(corpus[sampleIndex] as (typeof corpus)[number], new Rng(seed), kind);
          const escapes = fuzzOne(bytes);
          expect(escapes.map((e) => `${e.call}: ${String(e.error)}`)).toEqual([]);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('the mutations reach every layer of validation, not only the first check', () => {
    const rng = new Rng(1);
    const seen = new Map<string, number>();
    for (let i = 0; i < 3000; i++) {
      const bytes = mutate(rng.pick(corpus), rng);
      let outcome = 'ok';
      try {
        readTrailer(bytes, bytes.length);
      } catch (e) {
        outcome = e instanceof XpwcFormatError ? e.code : 'foreign';
      }
      seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
    }
    expect(seen.has('foreign')).toBe(false);
    for (const code of [
      'ok',
      'ERR_XPWC_BAD_MAGIC',
      'ERR_XPWC_STALE_V1',
      'ERR_XPWC_TRUNCATED',
      'ERR_XPWC_BAD_INDEX_START',
      'ERR_XPWC_ENTRY_OUT_OF_BOUNDS',
      'ERR_XPWC_NO_COMMIT',
      'ERR_XPWC_LIMIT',
      'ERR_XPWC_TRAILING_BYTES',
    ]) {
      expect(seen.get(code) ?? 0, code).toBeGreaterThan(0);
    }
  });
});

// Whatever a caller passes, only MmapError or a TypeError/RangeError with a documented
// code comes out, and no native call ever sees an unchecked value (a crash would take the
// test worker down).
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { afterAll, describe, expect } from 'vitest';
import {
  ARGUMENT_ERROR_CODES,
  type BackendName,
  MmapError,
  openMappedFile,
  pageSize,
} from '../src/index.js';
import { makeTempDir, testedBackends } from './helpers.js';

const anyValue = fc.oneof(
  fc.integer({ min: -2 * 65536, max: 4 * 65536 }),
  fc.double(),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }),
  fc.constantFrom(2 ** 53, 2 ** 53 - 1, 2 ** 32, Number.NaN, -0, Infinity),
  fc.string({ maxLength: 4 }),
  fc.constantFrom(null, undefined, true, {}, [], () => 0),
);

function onlyExpectedErrors(fn: () => void): void {
  try {
    fn();
  } catch (error) {
    if (error instanceof MmapError) return;
    const isArgumentError = error instanceof TypeError || error instanceof RangeError;
    if (!isArgumentError) throw error;
    // Every argument error carries one of the documented codes.
    if (
      !(ARGUMENT_ERROR_CODES as readonly unknown[]).includes((error as { code?: unknown }).code)
    ) {
      throw error;
    }
  }
}

const backends: BackendName[] = testedBackends;

describe.each(backends)('argument fuzzing (%s)', (backend) => {
  const { dir, cleanup } = makeTempDir();
  afterAll(cleanup);
  const file = openMappedFile(join(dir, 'fuzz.bin'), { mode: 'w+', backend });
  file.grow(16 * pageSize());
  afterAll(() => file.close());

  test.prop([anyValue, anyValue, fc.boolean()], { numRuns: 300 })(
    'map(offset, length) throws only argument errors or MmapError',
    (offset, length, writable) => {
      onlyExpectedErrors(() => {
        const mapping = file.map(offset as number, length as number, { writable });
        expect(mapping.buffer.byteLength).toBe(mapping.length);
        expect(Number(mapping.offset) + mapping.length).toBeLessThanOrEqual(file.size());
        mapping.close();
      });
    },
  );

  test.prop([anyValue, anyValue, anyValue, anyValue], { numRuns: 300 })(
    'sync / advise / residency throw only argument errors or MmapError',
    (offset, length, mode, pages) => {
      const mapping = file.map(pageSize() + 5, 3 * pageSize());
      try {
        onlyExpectedErrors(() => mapping.sync(offset as number, length as number, mode as 'sync'));
        onlyExpectedErrors(() =>
          mapping.advise(mode as 'normal', offset as number, length as number),
        );
        onlyExpectedErrors(() => {
          const r = mapping.residency({
            offset: offset as number,
            length: length as number,
            pages: pages as boolean,
          });
          expect(r.resident).toBeLessThanOrEqual(r.total);
        });
      } finally {
        mapping.close();
      }
    },
  );

  test.prop([anyValue, anyValue], { numRuns: 100 })(
    'grow / lock throw only argument errors or MmapError',
    (size, kind) => {
      // Keep growth small: only offsets up to a few pages are generated as numbers.
      if (typeof size === 'bigint' && size > 1n << 20n) return;
      if (typeof size === 'number' && size > 1 << 20) return;
      onlyExpectedErrors(() => file.grow(size as number, { sparse: true }));
      onlyExpectedErrors(() => file.lock(kind as 'shared', { wait: false }));
      onlyExpectedErrors(() => file.unlock());
    },
  );
});

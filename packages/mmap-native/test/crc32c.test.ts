// The addon's CRC32C: the RFC 3720 vectors, a bitwise reference at random lengths, offsets
// and continuations (the SIMD path and its byte tail both), and checked arguments on both
// sides of the binding (a bad value never reaches memory it should not read).
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { tryLoadAddon } from '../src/backends/posix/addon.js';
import { ARGUMENT_ERROR_CODES, crc32c, crc32cImplementation } from '../src/index.js';
import { bitwiseCrc32c } from './bitwise-crc32c.js';
import { lastJson, runNodeFixture } from './helpers.js';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return `${(error as Error).constructor.name} ${(error as { code?: string }).code}`;
  }
  return 'none';
}

describe('crc32c', () => {
  it("uses the CPU's instruction: SSE4.2 on x86-64, the CRC32 extension on arm64", () => {
    expect(['sse4.2', 'armv8-crc32', 'table']).toContain(crc32cImplementation());
    if (process.arch === 'x64') expect(crc32cImplementation()).toBe('sse4.2');
  });

  it('gives the RFC 3720 B.4 and check values', () => {
    const ascending = Uint8Array.from({ length: 32 }, (_, i) => i);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32c(ascending)).toBe(0x46dd794e);
    expect(crc32c(ascending.reverse())).toBe(0x113fdb5c);
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(0), 0x1234)).toBe(0x1234);
  });

  test.prop([fc.uint8Array({ minLength: 0, maxLength: 600 }), fc.nat(64), fc.nat(600), fc.nat()], {
    numRuns: 400,
  })('equals a bitwise CRC at any length, offset, split and start', (bytes, from, split, start) => {
    const view = bytes.subarray(Math.min(from, bytes.length));
    const cut = Math.min(split, view.length);
    const whole = bitwiseCrc32c(view, start >>> 0);
    expect(crc32c(view, start >>> 0)).toBe(whole);
    expect(crc32c(view.subarray(cut), crc32c(view.subarray(0, cut), start >>> 0))).toBe(whole);
  });

  it('reads a view only: the bytes around it do not count', () => {
    const bytes = Uint8Array.from({ length: 4096 }, (_, i) => (i * 31) & 0xff);
    const view = bytes.subarray(3, 4093);
    expect(crc32c(view)).toBe(bitwiseCrc32c(view));
    expect(crc32c(new Uint8Array(bytes.buffer, 4095, 1))).toBe(bitwiseCrc32c(bytes.subarray(4095)));
  });

  it('refuses what is not a Uint8Array or a u32 with a documented code', () => {
    for (const bytes of [null, undefined, 'abc', [1, 2], new Uint16Array(4), new ArrayBuffer(4)]) {
      expect(codeOf(() => crc32c(bytes as unknown as Uint8Array))).toBe(
        'TypeError ERR_INVALID_ARG_TYPE',
      );
    }
    for (const previous of [-1, 2 ** 32, 1.5, Number.NaN]) {
      expect(codeOf(() => crc32c(new Uint8Array(1), previous))).toBe('RangeError ERR_OUT_OF_RANGE');
    }
    expect(codeOf(() => crc32c(new Uint8Array(1), '1' as unknown as number))).toBe(
      'TypeError ERR_INVALID_ARG_TYPE',
    );
  });

  it('checks its arguments natively too, and reads nothing of a detached buffer', () => {
    const addon = tryLoadAddon();
    if (addon?.crc32c === undefined) throw new Error('the addon has no crc32c: rebuild it');
    const native = addon.crc32c.bind(addon) as (...args: unknown[]) => number;
    for (const args of [[], [new DataView(new ArrayBuffer(4))], [new Int8Array(2)], [{}]]) {
      const code = codeOf(() => native(...args));
      expect(
        ARGUMENT_ERROR_CODES.some((c) => code.endsWith(c)),
        code,
      ).toBe(true);
    }
    for (const previous of [-1, 2 ** 32, 0.5, Number.POSITIVE_INFINITY, 'x', 1n]) {
      const code = codeOf(() => native(new Uint8Array(1), previous));
      expect(
        ARGUMENT_ERROR_CODES.some((c) => code.endsWith(c)),
        code,
      ).toBe(true);
    }
    const buffer = new ArrayBuffer(16);
    const view = new Uint8Array(buffer, 4, 8);
    structuredClone(buffer, { transfer: [buffer] });
    expect(native(view, 7)).toBe(7);
  });

  it('gives the same values on the portable table path (MEMLAYER_CRC32C=table)', async () => {
    const result = await runNodeFixture('crc32c-table.ts', [], {
      env: { ...process.env, MEMLAYER_CRC32C: 'table' },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(lastJson(result)).toEqual({ implementation: 'table', mismatches: 0 });
  });
});

import { expect } from 'vitest';
import { type XpwcErrorCode, XpwcFormatError } from '../../src/index.js';

/** Asserts that `f` throws an XpwcFormatError with `code` (and, when given, `offset`); returns it. */
export function expectError(
  f: () => unknown,
  code: XpwcErrorCode,
  offset?: number,
): XpwcFormatError {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(XpwcFormatError);
  const error = caught as XpwcFormatError;
  expect(error.code).toBe(code);
  if (offset !== undefined) expect(error.offset).toBe(offset);
  return error;
}

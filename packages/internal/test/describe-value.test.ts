import { describe, expect, it } from 'vitest';
import { describeValue, expectedButReceived } from '../src/index.js';

describe('describeValue', () => {
  it('renders primitives as Node renders them in argument errors', () => {
    expect(describeValue(-1)).toBe('number -1');
    expect(describeValue(5n)).toBe('bigint 5n');
    expect(describeValue(true)).toBe('boolean true');
    expect(describeValue('rw')).toBe("string 'rw'");
    expect(describeValue(null)).toBe('null');
    expect(describeValue(undefined)).toBe('undefined');
    expect(describeValue(Symbol('s'))).toBe('symbol Symbol(s)');
  });

  it('names the class of objects, with sizes for arrays and byte views', () => {
    expect(describeValue(new Uint8Array(16))).toBe('an instance of Uint8Array (16 bytes)');
    expect(describeValue(new Float32Array(4))).toBe('an instance of Float32Array (16 bytes)');
    expect(describeValue([1, 2, 3])).toBe('an instance of Array (3 items)');
    expect(describeValue(new Map())).toBe('an instance of Map');
    expect(describeValue({ a: 1 })).toBe('an instance of Object');
    expect(describeValue(Object.create(null))).toBe('[Object: null prototype] {}');
    expect(describeValue(function named() {})).toBe('function named');
    expect(describeValue(() => {})).toBe('function <anonymous>');
  });

  it('keeps a message short whatever it is given', () => {
    const long = 'x'.repeat(100_000);
    expect(describeValue(long).length).toBeLessThan(60);
    expect(describeValue(long)).toBe(`string '${'x'.repeat(40)}…'`);
  });

  it('builds the one wording every package uses', () => {
    expect(expectedButReceived('a positive integer', 'size', 0)).toBe(
      'Expected a positive integer for size but received number 0',
    );
  });
});

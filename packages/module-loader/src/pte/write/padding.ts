// exir/_serialize/padding.py: padding_required / aligned_size; Python's math.lcm for segments.

/** Zero bytes needed after `offset` to reach a multiple of `alignment`. */
export function paddingRequired(offset: number, alignment: number): number {
  const remainder = offset % alignment;
  return remainder === 0 ? 0 : alignment - remainder;
}

/** `size` rounded up to a multiple of `alignment`. */
export function alignUp(size: number, alignment: number): number {
  return size + paddingRequired(size, alignment);
}

/** Least common multiple of two positive integers. */
export function lcm(a: number, b: number): number {
  let x = a;
  let y = b;
  while (y !== 0) [x, y] = [y, x % y];
  return (a / x) * b;
}

/** `bytes` followed by zeros up to `length` bytes (a copy). */
export function padTo(bytes: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(length);
  out.set(bytes);
  return out;
}

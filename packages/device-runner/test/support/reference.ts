// Independent references for the golden tests: written from the documented algorithms and
// byte layouts (simpler utils/fnv1a_64.h, task_interface/callable.h), sharing no code with
// the package.

const MASK64 = (1n << 64n) - 1n;

/** FNV-1a 64 the textbook way: basis 0xcbf29ce484222325, xor a byte, times 0x100000001b3. */
export function fnvReference(bytes: Uint8Array): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h ^ BigInt(b)) * 0x100000001b3n) & MASK64;
  return h;
}

/** Little-endian bytes of a 32-bit integer (the in-memory image of an i32/u32 on x86-64). */
export function le32(value: number): number[] {
  return [value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, (value >>> 24) & 0xff];
}

/** Writes `values` into `target` at `offset`. */
export function put(target: Uint8Array, offset: number, values: ArrayLike<number>): void {
  target.set(Array.from(values), offset);
}

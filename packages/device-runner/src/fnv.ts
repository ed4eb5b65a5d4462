/**
 * FNV-1a 64 (basis 0xcbf29ce484222325, prime 0x100000001b3) on two uint32 limbs.
 *
 * The prime is 2^40 + 0x1b3, so h * prime = h * 0x1b3 + (h << 40) mod 2^64. The low limb
 * times 0x1b3 is done in 16-bit halves with Math.imul (exact, no floats), its carry goes to
 * the high limb, and h << 40 only adds lo << 8 to the high limb. No BigInt per byte.
 */
export const FNV1A64_OFFSET_BASIS = 0xcbf29ce484222325n;
export const FNV1A64_PRIME = 0x100000001b3n;

export class Fnv1a64 {
  private hi = 0xcbf29ce4 | 0;
  private lo = 0x84222325 | 0;

  update(bytes: Uint8Array): this {
    let hi = this.hi;
    let lo = this.lo;
    for (let i = 0; i < bytes.length; i++) {
      lo ^= bytes[i] as number;
      const low = Math.imul(lo & 0xffff, 0x1b3);
      const high = Math.imul(lo >>> 16, 0x1b3) + (low >>> 16);
      hi = (Math.imul(hi, 0x1b3) + (lo << 8) + (high >>> 16)) | 0;
      lo = (high << 16) | (low & 0xffff);
    }
    this.hi = hi;
    this.lo = lo;
    return this;
  }

  /** Hashes a value as 4 little-endian bytes (the in-memory image of an i32/u32). */
  updateU32(value: number): this {
    const word = new Uint8Array(4);
    new DataView(word.buffer).setUint32(0, value >>> 0, true);
    return this.update(word);
  }

  digest(): bigint {
    return (BigInt(this.hi >>> 0) << 32n) | BigInt(this.lo >>> 0);
  }
}

export function fnv1a64(bytes: Uint8Array): bigint {
  return new Fnv1a64().update(bytes).digest();
}

/** Formats a u64 as 0x + 16 hex digits (the form used in logs and the spec). */
export function formatHash64(value: bigint): string {
  return `0x${value.toString(16).padStart(16, '0')}`;
}

import { PACKED_ALLOCATION_ALIGNMENT, roundUp } from '../alignment.js';
import { packedSize } from './gemm-goi.js';
import { fullyConnectedSeedOf } from './seed.js';

/**
 * Whether another fully-connected shape with as many weights packs, on the same ukernel,
 * to the same seed and the same aligned size as [nc, kc]. An entry that stores no layout
 * (a v2 file's) cannot tell the two apart: ExecuTorch names a constant by the SHA-256 of
 * its bytes (backends/xnnpack/operators/node_visitor.py), so the same weight bytes under another
 * shape give the same entry name, and XNNPACK's seed XORs the two channel counts, so
 * [nc, kc] and [kc, nc] always share it. Checks every factor pair of nc * kc: O(√(nc·kc)).
 */
export function seedAndSizeShared(
  nc: number,
  kc: number,
  nr: number,
  kr: number,
  sr: number,
  extraBytes: number,
  operatorType: number,
  alignedSize: number,
): boolean {
  const count = nc * kc;
  const seed = fullyConnectedSeedOf(nc, kc, nr, kr, sr, extraBytes, operatorType, false);
  const same = (outputs: number) => {
    if (outputs === nc) return false;
    const inputs = count / outputs;
    if (
      fullyConnectedSeedOf(outputs, inputs, nr, kr, sr, extraBytes, operatorType, false) !== seed
    ) {
      return false;
    }
    const size = packedSize({ nc: outputs, kc: inputs, nr, kr, sr, extraBytes });
    return roundUp(size, PACKED_ALLOCATION_ALIGNMENT) === alignedSize;
  };
  for (let d = 1; d * d <= count; d++) {
    if (count % d === 0 && (same(d) || same(count / d))) return true;
  }
  return false;
}

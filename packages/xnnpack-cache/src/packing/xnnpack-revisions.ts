import { invalidArgument } from '../errors.js';

/**
 * XNNPACK revisions whose operator-type numbering this package knows. The enum moves when
 * XNNPACK adds operators, and the fully-connected seed mixes it in, so a seed only matches
 * files written by the same revision. Values counted in src/xnnpack/operator-type-defs.inc
 * at each commit (xnn_operator_type_invalid = 0).
 */
export const XNNPACK_REVISIONS = {
  /** Pinned by ExecuTorch main (Aug 2026). */
  '92a7ad50': { fullyConnectedNcF32: 63 },
  /** ExecuTorch's pin of mid-2026. */
  '1adaa7c7': { fullyConnectedNcF32: 59 },
} as const satisfies Record<string, { readonly fullyConnectedNcF32: number }>;

export type XnnpackRevision = keyof typeof XNNPACK_REVISIONS;

/** What ExecuTorch main pins. */
export const DEFAULT_XNNPACK_REVISION: XnnpackRevision = '92a7ad50';

export function isXnnpackRevision(value: unknown): value is XnnpackRevision {
  return typeof value === 'string' && Object.hasOwn(XNNPACK_REVISIONS, value);
}

export function assertXnnpackRevision(value: unknown, what: string): XnnpackRevision {
  if (!isXnnpackRevision(value)) {
    invalidArgument(`one of ${Object.keys(XNNPACK_REVISIONS).join(', ')}`, what, value);
  }
  return value;
}

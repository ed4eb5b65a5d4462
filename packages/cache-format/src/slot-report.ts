// What each commit slot of a v3 file was found to be when its committed trailer was read.
import type { XpwcFormatError } from './errors.js';
import type { SlotIndex, SlotState } from './header.js';

/**
 * - `live`: names the trailer in use.
 * - `standby`: valid, names an older commit that was not needed (so not read).
 * - `empty`: 32 zero bytes, never written. Normal for a file with one commit.
 * - `corrupt`: bad CRC32C or impossible fields. Each slot sits alone in a 512-byte sector,
 *   which storage writes atomically, so this is damage (bit rot, a stray write), not an
 *   interrupted save: report it as a problem.
 * - `torn-tail`: valid, but its trailer runs past the end of the file: the file was cut while
 *   or after a save (an interrupted save; a warning).
 * - `bad-trailer`: valid, but the trailer it names fails its checks (CRC, fields) or is not
 *   the one the slot committed (storage lost or reordered a write): a problem.
 */
export type CommitSlotStatus =
  | 'live'
  | 'standby'
  | 'empty'
  | 'corrupt'
  | 'torn-tail'
  | 'bad-trailer';

export interface CommitSlotReport {
  readonly index: SlotIndex;
  readonly status: CommitSlotStatus;
  /** The generation the slot records; null when it is empty or corrupt. */
  readonly generation: number | null;
  /** Why the slot is corrupt, torn-tail or bad-trailer; null otherwise. */
  readonly error: XpwcFormatError | null;
}

/** The statuses that mean damage rather than an interrupted save or a normal state. */
export const DAMAGED_SLOT_STATUSES: readonly CommitSlotStatus[] = ['corrupt', 'bad-trailer'];

/**
 * Reports for both slots. `outcomes` maps a valid slot's index to what reading its trailer
 * gave ('live', 'torn-tail' or 'bad-trailer' with the error); valid slots not in it are
 * `standby`.
 */
export function reportSlots(
  slots: readonly [SlotState, SlotState],
  outcomes: ReadonlyMap<SlotIndex, { status: CommitSlotStatus; error: XpwcFormatError | null }>,
): [CommitSlotReport, CommitSlotReport] {
  const report = (s: SlotState): CommitSlotReport => {
    if (s.status === 'empty')
      return { index: s.index, status: 'empty', generation: null, error: null };
    if (s.status === 'corrupt') {
      return { index: s.index, status: 'corrupt', generation: null, error: s.error };
    }
    const outcome = outcomes.get(s.index) ?? { status: 'standby' as const, error: null };
    return { index: s.index, generation: s.slot.generation, ...outcome };
  };
  return [report(slots[0]), report(slots[1])];
}

import type { ChipCallableView } from './chip-callable.js';
import { MAX_FUNC_ID } from './constants.js';
import { DeviceRunnerError } from './errors.js';
import { childDeviceAddress } from './patch.js';

/** (func_id, device address of the child CoreCallable) per child, in child order. */
export type FuncTable = readonly (readonly [number, number])[];

/**
 * Refuses a callable whose children name a func_id outside the dispatch table. Newer simpler
 * checks this before its first host-to-device copy (runtime_maker.cpp,
 * register_callable_impl; older releases uploaded first and freed on refusal), so a bad
 * callable never touches device memory.
 */
export function checkFuncIds(parsed: ChipCallableView): void {
  parsed.children.forEach((child, i) => {
    if (child.funcId < 0 || child.funcId >= MAX_FUNC_ID) {
      throw new DeviceRunnerError(
        'ERR_FUNC_ID_OUT_OF_RANGE',
        `Expected a func_id in [0, ${MAX_FUNC_ID}) for child ${i} but received ${child.funcId}`,
      );
    }
  });
}

/** The func_id table of a chip buffer at `chipDev`: made at its upload, shared by its holders. */
export function funcTableOf(parsed: ChipCallableView, chipDev: number): FuncTable {
  return parsed.children.map(
    (child) => [child.funcId, childDeviceAddress(chipDev, child)] as const,
  );
}

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  alignUp,
  buildChipCallable,
  DeviceRunner,
  DeviceRunnerError,
  type DeviceRunnerErrorCode,
  SimDevice,
} from '../src/index.js';
import { errorCode, makeCallable } from './support/callables.js';

// Contents 0..3 are valid and distinct, 4 fails the orch load, 5 has func_id 1024.
const contents = [
  makeCallable(1),
  makeCallable(2, { children: 0 }),
  makeCallable(3, { children: 5 }),
  makeCallable(4, { children: 1 }),
  buildChipCallable({ orch: Uint8Array.of(1, 2, 3), children: [] }),
  makeCallable(6, { funcIdBase: 1023 }),
];

type Op =
  | {
      kind: 'register';
      cid: number;
      content: number;
      host: boolean;
      fault: 'none' | 'alloc' | 'h2d';
    }
  | { kind: 'unregister'; cid: number }
  | { kind: 'bind'; cid: number }
  | { kind: 'run'; cid: number }
  | { kind: 'finalize' };

type RegisterOp = Extract<Op, { kind: 'register' }>;

/** The code registerCallable must refuse with, in the order its steps run; null = accepted. */
function expectedRefusal(
  op: RegisterOp,
  live: boolean,
  model: ReadonlyMap<number, number>,
): DeviceRunnerErrorCode | null {
  // func_ids are checked before the upload: no fault can fire for them.
  if (op.content === 5) return 'ERR_FUNC_ID_OUT_OF_RANGE';
  // upload: a new content needs an allocation and a copy, where the injected fault fires.
  if (!live && op.fault === 'alloc') return 'ERR_DEVICE_ALLOC_FAILED';
  if (!live && op.fault === 'h2d') return 'ERR_DEVICE_COPY_FAILED';
  // validate, then load.
  if (!Number.isInteger(op.cid) || op.cid < 0 || op.cid >= 64)
    return 'ERR_CALLABLE_ID_OUT_OF_RANGE';
  if (model.has(op.cid)) return 'ERR_CALLABLE_ALREADY_REGISTERED';
  if (op.content === 4) return op.host ? 'ERR_HOST_LOAD_FAILED' : 'ERR_AICPU_LOAD_FAILED';
  return null;
}

const cidArb = fc.oneof(
  { weight: 9, arbitrary: fc.integer({ min: 0, max: 5 }) },
  { weight: 1, arbitrary: fc.constantFrom(-1, 64) },
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('register' as const),
      cid: cidArb,
      content: fc.nat(5),
      host: fc.boolean(),
      fault: fc.constantFrom('none' as const, 'none' as const, 'alloc' as const, 'h2d' as const),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('unregister' as const), cid: cidArb }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('bind' as const), cid: cidArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('run' as const), cid: cidArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('finalize' as const) }) },
);

describe('DeviceRunner invariants under random operation sequences', () => {
  it('refcounts match holders, committed bytes match live buffers, no double free, finalize ⇒ zero', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 60 }), (ops) => {
        const device = new SimDevice({ capacity: 1 << 20 });
        const baselineAddr = device.malloc(777);
        const baseline = device.stats().committedBytes;
        const runner = new DeviceRunner({ device });
        const model = new Map<number, number>(); // cid -> content index
        let bound: number | null = null;
        let failed = 0;

        for (const op of ops) {
          if (op.kind === 'register') {
            const live = [...model.values()].includes(op.content);
            const expected = expectedRefusal(op, live, model);
            if (op.fault !== 'none') device.failNext(op.fault);
            let code: string | null = null;
            try {
              runner.registerCallable(op.cid, contents[op.content] as Uint8Array, {
                orchestration: op.host ? 'host' : 'device',
              });
            } catch (error) {
              // A refusal is a DeviceRunnerError with the code of the step that refused;
              // anything else (a TypeError, a RangeError, another code) fails the property.
              expect(error).toBeInstanceOf(DeviceRunnerError);
              code = (error as DeviceRunnerError).code;
            }
            device.failNext('alloc', 0);
            device.failNext('h2d', 0);
            expect(code).toBe(expected);
            if (code === null) model.set(op.cid, op.content);
            else failed++;
          } else if (op.kind === 'unregister') {
            expect(runner.unregisterCallable(op.cid)).toBe(model.delete(op.cid));
            if (bound === op.cid) bound = null;
          } else if (op.kind === 'bind' || op.kind === 'run') {
            let code: string | null = null;
            try {
              if (op.kind === 'bind') runner.bind(op.cid);
              else runner.beginRun(op.cid);
            } catch (error) {
              expect(error).toBeInstanceOf(DeviceRunnerError);
              code = (error as DeviceRunnerError).code;
            }
            expect(code).toBe(model.has(op.cid) ? null : 'ERR_CALLABLE_NOT_REGISTERED');
            bound = code === null ? op.cid : null;
            if (op.kind === 'run' && code === null) {
              // While the run is in flight nothing may change the table or the buffers.
              const other = (op.cid + 1) % 6;
              expect(errorCode(() => runner.unregisterCallable(op.cid))).toBe('ERR_RUN_IN_FLIGHT');
              expect(errorCode(() => runner.bind(other))).toBe('ERR_RUN_IN_FLIGHT');
              expect(
                errorCode(() => runner.registerCallable(other, contents[0] as Uint8Array)),
              ).toBe('ERR_RUN_IN_FLIGHT');
              failed++;
              runner.endRun();
            }
          } else {
            runner.finalize();
            model.clear();
            bound = null;
            failed = 0;
            expect(runner.stats().committedBytes).toBe(0);
            expect(device.stats().committedBytes).toBe(baseline);
          }

          // Invariants after every step.
          const buffers = runner.chipBuffers();
          const holders = new Map<number, number>();
          for (const cid of model.keys()) {
            const chipDev = runner.callable(cid)?.chipDev as number;
            holders.set(chipDev, (holders.get(chipDev) ?? 0) + 1);
          }
          expect(buffers.length).toBe(new Set(model.values()).size);
          for (const buffer of buffers) {
            expect(buffer.refcount).toBeGreaterThan(0);
            expect(buffer.refcount).toBe(holders.get(buffer.devAddr));
          }
          const reserved = buffers.reduce((sum, b) => sum + alignUp(b.size, 64), 0);
          expect(runner.stats().committedBytes).toBe(reserved);
          expect(device.stats().committedBytes).toBe(baseline + reserved);
          expect(device.stats().liveAllocations).toBe(1 + buffers.length);
          const d = device.stats();
          expect(d.unknownFrees).toBe(0);
          expect(d.allocs - d.frees).toBe(d.liveAllocations);
          expect(runner.stats().registeredCallables).toBe(model.size);
          expect(runner.stats().failedRegistrations).toBe(failed);
          if (bound === null) expect(runner.dispatch.size).toBe(0);
          else {
            const expected = new Map(runner.callable(bound)?.dispatch.map(([f, a]) => [f, a]));
            expect(new Map(runner.dispatch)).toEqual(expected);
          }
        }
        runner.finalize();
        expect(runner.stats().committedBytes).toBe(0);
        expect(device.stats().committedBytes).toBe(baseline);
        device.free(baselineAddr);
        expect(device.stats().committedBytes).toBe(0);
        expect(device.stats().unknownFrees).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});

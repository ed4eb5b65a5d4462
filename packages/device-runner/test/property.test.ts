import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { alignUp, buildChipCallable, DeviceRunner, SimDevice } from '../src/index.js';
import { makeCallable } from './support/callables.js';

// Contents 0..3 are valid and distinct, 4 fails the orch load, 5 has func_id 1024.
const contents = [
  makeCallable(1),
  makeCallable(2, { children: 0 }),
  makeCallable(3, { children: 5 }),
  makeCallable(4, { children: 1 }),
  buildChipCallable({ orch: Uint8Array.of(1, 2, 3), children: [] }),
  makeCallable(6, { funcIdBase: 1023 }),
];
const VALID = new Set([0, 1, 2, 3]);

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

        for (const op of ops) {
          if (op.kind === 'register') {
            const live = [...model.values()].includes(op.content);
            const expectOk =
              Number.isInteger(op.cid) &&
              op.cid >= 0 &&
              op.cid < 64 &&
              !model.has(op.cid) &&
              VALID.has(op.content) &&
              (op.fault === 'none' || live);
            if (op.fault !== 'none') device.failNext(op.fault);
            let ok = true;
            try {
              runner.registerCallable(op.cid, contents[op.content] as Uint8Array, {
                orchestration: op.host ? 'host' : 'device',
              });
            } catch (error) {
              ok = false;
              expect((error as Error).name).toBe('DeviceRunnerError');
            }
            device.failNext('alloc', 0);
            device.failNext('h2d', 0);
            expect(ok).toBe(expectOk);
            if (ok) model.set(op.cid, op.content);
          } else if (op.kind === 'unregister') {
            expect(runner.unregisterCallable(op.cid)).toBe(model.delete(op.cid));
            if (bound === op.cid) bound = null;
          } else if (op.kind === 'bind' || op.kind === 'run') {
            let ok = true;
            try {
              if (op.kind === 'bind') runner.bind(op.cid);
              else runner.beginRun(op.cid);
            } catch {
              ok = false;
            }
            expect(ok).toBe(model.has(op.cid));
            bound = ok ? op.cid : null;
            if (op.kind === 'run' && ok) {
              expect(() => runner.unregisterCallable(op.cid)).toThrow();
              runner.endRun();
            }
          } else {
            runner.finalize();
            model.clear();
            bound = null;
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

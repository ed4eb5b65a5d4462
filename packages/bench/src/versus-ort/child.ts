// Entry of a comparison's child process: `node versus-ort/child.js '<VersusTask json>'`. One
// start of one engine per process, so every start pays what a new process pays. Only the
// chosen engine is imported, and only inside the timed import.
import { readFileSync } from 'node:fs';
import { parentChannel } from '../child-io.js';
import { median, nowMs } from '../measure.js';
import { fixedInput } from './inputs.js';
import type { OpenedModel } from './opened-model.js';
import type { SteadyForward, VersusResult, VersusTask } from './protocol.js';

/** Timed forwards per batch size at least, however long they take. */
const STEADY_MIN_RUNS = 3;
const STEADY_MAX_RUNS = 200;

async function open(task: VersusTask): Promise<OpenedModel> {
  const { start } = task;
  if (start.engine === 'memlayer')
    return (await import('./memlayer-engine.js')).openMemlayer(start);
  return (await import('./ort-engine.js')).openOrt(start);
}

/** Bytes of this process's mappings of `files` (/proc/self/maps; 0 off Linux). */
function mappedBytes(files: readonly string[]): number {
  let maps: string;
  try {
    maps = readFileSync('/proc/self/maps', 'utf8');
  } catch {
    return 0;
  }
  let bytes = 0;
  for (const line of maps.split('\n')) {
    const fields = line.split(/\s+/);
    if (!files.includes(fields[5] ?? '')) continue;
    const [from, to] = (fields[0] ?? '').split('-').map((hex) => Number.parseInt(hex, 16));
    bytes += (to as number) - (from as number);
  }
  return bytes;
}

async function steady(model: OpenedModel, task: VersusTask, batch: number): Promise<SteadyForward> {
  const input = fixedInput(task.dim, batch);
  // The first forward of a batch size sizes buffers (both engines): not a steady one.
  if (batch !== 1) await model.forward(input, batch);
  const times: number[] = [];
  const started = nowMs();
  while (
    times.length < STEADY_MIN_RUNS ||
    (times.length < STEADY_MAX_RUNS && nowMs() - started < task.steadyBudgetMs)
  ) {
    const runStart = nowMs();
    await model.forward(input, batch);
    times.push(nowMs() - runStart);
  }
  return { batch, ms: median(times), runs: times.length };
}

async function main(): Promise<void> {
  const task = JSON.parse(process.argv[2] ?? '{}') as VersusTask;
  const parent = parentChannel();
  if (task.hold) {
    parent.send('idle', { pid: process.pid });
    await parent.waitFor('load');
  }
  const model = await open(task);
  const forwardStart = nowMs();
  const output = await model.forward(fixedInput(task.dim, 1), 1);
  const firstForwardMs = nowMs() - forwardStart;
  // performance.now() counts from the process's start (its timeOrigin).
  const firstOutputSinceStartMs = performance.now();
  const mapped = mappedBytes(task.mappedFiles);
  const steadyForwards: SteadyForward[] = [];
  for (const batch of task.steadyBatches) steadyForwards.push(await steady(model, task, batch));
  const result: VersusResult = {
    importMs: model.importMs,
    readyMs: model.readyMs,
    firstForwardMs,
    firstOutputSinceStartMs,
    output: Array.from(output),
    steady: steadyForwards,
    mappedBytes: mapped,
  };
  parent.send('result', result);
  if (task.hold) await parent.waitFor('exit');
  await model.close();
  process.exit(0);
}

main().catch((error: unknown) => {
  parentChannel().send('error', {
    message: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  process.exit(1);
});

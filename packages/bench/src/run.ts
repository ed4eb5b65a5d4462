import { coldWarmSection } from './cold-warm.js';
import { deviceSection } from './device.js';
import { fileSizeSection } from './file-size.js';
import { describeMachine } from './machine.js';
import { nowMs } from './measure.js';
import { memorySection } from './memory.js';
import { mmapSection } from './mmap.js';
import { nativeSection } from './native.js';
import type { BenchReport } from './report.js';
import {
  type BenchOptions,
  SECTION_TITLES,
  type SectionBody,
  type SectionId,
  type SectionResult,
} from './types.js';
import { versusOrtSection } from './versus-ort/section.js';

const SECTIONS: Record<SectionId, (options: BenchOptions) => Promise<SectionBody>> = {
  'cold-warm': coldWarmSection,
  native: nativeSection,
  memory: memorySection,
  'file-size': fileSizeSection,
  mmap: mmapSection,
  device: deviceSection,
  'versus-ort': versusOrtSection,
};

async function runSection(id: SectionId, options: BenchOptions): Promise<SectionResult> {
  const started = nowMs();
  const title = SECTION_TITLES[id];
  try {
    const body = await SECTIONS[id](options);
    return {
      id,
      title,
      ...body,
      status: body.status ?? 'measured',
      seconds: (nowMs() - started) / 1000,
    };
  } catch (error) {
    return {
      id,
      title,
      status: 'failed',
      reason: error instanceof Error ? error.message : String(error),
      figures: [],
      comparisons: [],
      notes: [],
      seconds: (nowMs() - started) / 1000,
    };
  }
}

/** Runs the chosen sections one after the other (never in parallel: they would compete). */
export async function runBench(
  ids: readonly SectionId[],
  options: Omit<BenchOptions, 'shared'>,
): Promise<BenchReport> {
  const machine = describeMachine();
  const started = nowMs();
  const shared = { coldWarm: new Map() };
  const sections: SectionResult[] = [];
  for (const id of ids) {
    options.progress(`section ${SECTION_TITLES[id]}`);
    sections.push(await runSection(id, { ...options, shared }));
  }
  return {
    tool: '@memlayer/bench',
    quick: options.quick,
    machine,
    seconds: (nowMs() - started) / 1000,
    sections,
  };
}

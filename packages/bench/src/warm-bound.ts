import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { crc32cOf } from '@memlayer/cache-format';
import { methodPlansPath } from '@memlayer/module-loader';
import { openFloorTable } from './floor.js';
import { nowMs } from './measure.js';

export interface WarmBoundResult {
  /** Manifest + plans + the floor's table + one look-up and one object per layer, in-process ms. */
  readonly boundMs: number;
  readonly layers: number;
}

interface ManifestNode {
  readonly op: string;
  readonly input: string;
  readonly output: string;
  readonly weight?: string;
  readonly bias?: string;
}

/**
 * A bound for any warm start in JavaScript that keeps the program's formats: what a warm
 * start of `method` cannot skip, written as plainly as possible. It reads and stats the
 * JSON manifest (a plan knows a settled manifest by its identity) and makes one object per
 * node; reads the method plans file (its check digest, its JSON, the entry names); builds
 * the floor's name → bytes table; and per linear node finds the entry by its planned name
 * and makes one operator-sized object. No checks beyond
 * those, no locks, no accounting: the gap between a warm start and this bound is what our
 * code adds, the gap between this bound and the floor is what the formats cost.
 */
export function measureWarmBound(
  programPath: string,
  cachePath: string,
  method: string,
): WarmBoundResult {
  const start = nowMs();
  const manifestBytes = readFileSync(programPath);
  statSync(programPath, { bigint: true });
  const manifest = JSON.parse(manifestBytes.toString('utf8')) as {
    methods: Record<string, { graph: ManifestNode[] }>;
  };
  const graph = manifest.methods[method]?.graph ?? [];
  const nodes: ManifestNode[] = new Array(graph.length);
  for (let i = 0; i < graph.length; i++) {
    const node = graph[i] as ManifestNode;
    nodes[i] = {
      op: node.op,
      input: node.input,
      output: node.output,
      weight: node.weight,
      bias: node.bias,
    } as ManifestNode;
  }
  const entryNames = plannedEntryNames(methodPlansPath(cachePath), resolve(programPath), method);
  const floor = openFloorTable(cachePath);
  const operators: object[] = [];
  let linear = 0;
  for (const node of nodes) {
    if (node.op !== 'linear') continue;
    const packed = floor.table.get(entryNames[linear++] as string);
    if (packed === undefined) throw new Error(`no cache entry for node ${node.output}`);
    operators.push({ packed, input: node.input, output: node.output });
  }
  const boundMs = nowMs() - start;
  floor.close();
  return { boundMs, layers: operators.length };
}

/**
 * The entry names of `method`'s plan (one per linear node) in the plans file: a header line
 * with a check digest, a line of JSON with the plans, then each plan's names on a line.
 */
function plannedEntryNames(plansPath: string, programPath: string, method: string): string[] {
  const bytes = readFileSync(plansPath);
  const newline = bytes.indexOf(0x0a);
  const head = JSON.parse(bytes.subarray(0, newline).toString('latin1')) as { check: string };
  const body = bytes.subarray(newline + 1);
  // The plans file's check digest: CRC32C of the body, 8 hex digits (module-loader's format 5).
  if (crc32cOf(body).toString(16).padStart(8, '0') !== head.check) {
    throw new Error(`${plansPath}: check digest differs`);
  }
  const lines = body.toString('latin1').split('\n');
  const { plans } = JSON.parse(lines[0] as string) as {
    plans: { program: string; method: string }[];
  };
  const at = plans.findIndex((p) => p.program === programPath && p.method === method);
  if (at < 0) throw new Error(`${plansPath}: no plan of ${programPath} ${method}`);
  return (lines[1 + at] as string).split(',');
}

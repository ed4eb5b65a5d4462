// Per-mapping memory figures from /proc/self/smaps (Linux only), e.g. to tell how much of
// a cache file is dirty in memory versus clean and droppable.

import type { Mapping } from './mapping.js';
import { nodeFs } from './node-builtins.js';

/** Bytes, from the smaps fields of the same names. */
export interface MappingMemoryStats {
  size: number;
  rss: number;
  pss: number;
  sharedClean: number;
  sharedDirty: number;
  privateClean: number;
  privateDirty: number;
  referenced: number;
  anonymous: number;
  swap: number;
}

const FIELDS: Record<string, keyof MappingMemoryStats> = {
  Size: 'size',
  Rss: 'rss',
  Pss: 'pss',
  Shared_Clean: 'sharedClean',
  Shared_Dirty: 'sharedDirty',
  Private_Clean: 'privateClean',
  Private_Dirty: 'privateDirty',
  Referenced: 'referenced',
  Anonymous: 'anonymous',
  Swap: 'swap',
};

const HEADER = /^([0-9a-f]+)-[0-9a-f]+ /;
const FIELD = /^(\w+):\s+(\d+) kB$/;

/** Every entry of /proc/self/smaps by start address; read it once for many mappings. */
export type SmapsTable = ReadonlyMap<bigint, MappingMemoryStats>;

function emptyStats(): MappingMemoryStats {
  return {
    size: 0,
    rss: 0,
    pss: 0,
    sharedClean: 0,
    sharedDirty: 0,
    privateClean: 0,
    privateDirty: 0,
    referenced: 0,
    anonymous: 0,
    swap: 0,
  };
}

/** Parses /proc/self/smaps once; null when not on Linux or it cannot be read. */
export function readSmapsTable(): SmapsTable | null {
  if (process.platform !== 'linux') return null;
  let text: string;
  try {
    text = nodeFs().readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return null;
  }
  const table = new Map<bigint, MappingMemoryStats>();
  let stats: MappingMemoryStats | null = null;
  for (const line of text.split('\n')) {
    const header = HEADER.exec(line);
    if (header) {
      stats = emptyStats();
      table.set(BigInt(`0x${header[1]}`), stats);
      continue;
    }
    if (!stats) continue;
    const field = FIELD.exec(line);
    const key = field?.[1] === undefined ? undefined : FIELDS[field[1]];
    if (field?.[2] !== undefined && key !== undefined) stats[key] = Number(field[2]) * 1024;
  }
  return table;
}

/**
 * The smaps entry of the kernel mapping starting at `address`, or null when not on Linux
 * or no mapping starts there. Pass a table from readSmapsTable() when asking about many
 * mappings: each call without one reads the whole of /proc/self/smaps.
 */
export function smapsOf(
  address: bigint,
  table: SmapsTable | null = readSmapsTable(),
): MappingMemoryStats | null {
  return table?.get(address) ?? null;
}

/** smapsOf(mapping.address); null for heap mappings, closed mappings or off Linux. */
export function mappingMemoryStats(
  mapping: Mapping,
  table?: SmapsTable | null,
): MappingMemoryStats | null {
  if (mapping.address === null || mapping.closed) return null;
  return smapsOf(mapping.address, table === undefined ? readSmapsTable() : table);
}

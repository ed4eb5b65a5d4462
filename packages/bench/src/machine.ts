import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';

export interface MachineDescription {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryBytes: number;
  readonly node: string;
  readonly platform: string;
  readonly kernel: string;
  readonly date: string;
  /** 1-minute load average when the run started: the machine is shared, so it is noted. */
  readonly loadAverage1m: number;
}

function cpuModelName(): string {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (match) return (match[1] as string).trim();
  } catch {
    // Not Linux: fall back to what Node reports.
  }
  return cpus()[0]?.model ?? 'unknown';
}

export function describeMachine(): MachineDescription {
  return {
    cpuModel: cpuModelName(),
    cores: cpus().length,
    memoryBytes: totalmem(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    kernel: release(),
    date: new Date().toISOString(),
    loadAverage1m: loadavg()[0] ?? 0,
  };
}

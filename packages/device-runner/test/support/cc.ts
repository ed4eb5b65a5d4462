import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const hasCc = spawnSync('cc', ['--version'], { stdio: 'ignore' }).status === 0;
export const hasReadelf = spawnSync('readelf', ['--version'], { stdio: 'ignore' }).status === 0;

export interface BuiltObject {
  readonly path: string;
  readonly bytes: Uint8Array;
}

/** Temp dir for a test file; removed by the returned cleanup. */
export function makeTempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'device-runner-elf-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Compiles `source` into a shared object with the system C compiler. */
export function buildSharedObject(
  dir: string,
  name: string,
  source: string,
  extraFlags: readonly string[] = [],
): BuiltObject {
  const cPath = join(dir, `${name}.c`);
  const soPath = join(dir, `${name}.so`);
  writeFileSync(cPath, source);
  execFileSync('cc', ['-shared', '-fPIC', '-O1', ...extraFlags, '-o', soPath, cPath], {
    stdio: 'pipe',
  });
  return { path: soPath, bytes: new Uint8Array(readFileSync(soPath)) };
}

/** The build id as `readelf -n` prints it (hex), or null. */
export function readelfBuildId(path: string): string | null {
  const out = execFileSync('readelf', ['-n', path], { encoding: 'utf8' });
  const match = /Build ID:\s*([0-9a-f]+)/.exec(out);
  return match ? (match[1] as string) : null;
}

/** st_value of each defined dynamic symbol as `readelf --dyn-syms -W` prints it. */
export function readelfDynamicSymbols(path: string): Map<string, bigint> {
  const out = execFileSync('readelf', ['--dyn-syms', '-W', path], { encoding: 'utf8' });
  const symbols = new Map<string, bigint>();
  for (const line of out.split('\n')) {
    // Num: Value Size Type Bind Vis Ndx Name
    const fields = line.trim().split(/\s+/);
    if (fields.length < 8 || !/^\d+:$/.test(fields[0] as string)) continue;
    if (fields[6] === 'UND') continue;
    symbols.set((fields[7] as string).replace(/@.*$/, ''), BigInt(`0x${fields[1]}`));
  }
  return symbols;
}

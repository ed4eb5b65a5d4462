import { basename, dirname, join } from 'node:path';
import { nodeFs } from '../node-fs.js';

/** What carries over from a replaced file (fs.Stats and mmap-native's FileStat both have it). */
export interface FileOwnership {
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
}

export interface ReplaceOptions {
  /** Mode of the new file when there is no file to take it from. */
  readonly fileMode: number;
  /** The file being replaced (its fstat): its mode bits and owner carry over to the new file. */
  readonly keepFrom?: FileOwnership | undefined;
}

/**
 * Temp files carry the writer's pid, so the next open or compaction can tell the leftovers
 * of a dead process (killed before its rename) from a live writer's: `.<name>.<pid>.<r>.tmp`.
 */
function tempPattern(path: string): RegExp {
  const escaped = basename(path).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^\\.${escaped}\\.(\\d+)\\.[a-z0-9]+\\.tmp$`);
}

/** Removes temp files next to `path` left by processes that no longer run; returns how many. */
export function removeDeadTemps(path: string): number {
  const pattern = tempPattern(path);
  const folder = dirname(path);
  let names: string[];
  try {
    names = nodeFs().readdirSync(folder);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const pid = Number(pattern.exec(name)?.[1] ?? Number.NaN);
    if (!Number.isInteger(pid) || pid === process.pid || isRunning(pid)) continue;
    try {
      nodeFs().unlinkSync(join(folder, name));
      removed++;
    } catch {
      // Another process cleaned it up first.
    }
  }
  return removed;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs under another user.
    return (error as { code?: string }).code === 'EPERM';
  }
}

/**
 * Writes a new file in `path`'s folder through `fill`, gives it the old file's mode and
 * owner (or `fileMode`), fsyncs it and renames it over `path`: processes that still map the
 * old file keep its inode and bytes (rename is atomic within a folder).
 */
export function writeFileAtomically(
  path: string,
  options: ReplaceOptions,
  fill: (fd: number) => void,
): void {
  const temp = join(
    dirname(path),
    `.${basename(path)}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`,
  );
  const fd = nodeFs().openSync(temp, 'wx', options.fileMode);
  try {
    fill(fd);
    keepModeAndOwner(fd, options.keepFrom);
    nodeFs().fsyncSync(fd);
  } catch (error) {
    nodeFs().closeSync(fd);
    nodeFs().unlinkSync(temp);
    throw error;
  }
  nodeFs().closeSync(fd);
  nodeFs().renameSync(temp, path);
  syncFolder(dirname(path));
}

function keepModeAndOwner(fd: number, from: FileOwnership | undefined): void {
  if (from === undefined) return;
  nodeFs().fchmodSync(fd, from.mode & 0o7777);
  try {
    nodeFs().fchownSync(fd, from.uid, from.gid);
  } catch (error) {
    // Only root may give a file away; the same owner needs no change.
    const code = (error as { code?: string }).code;
    if (code !== 'EPERM' && code !== 'EINVAL') throw error;
  }
}

export function writeAll(fd: number, bytes: Uint8Array, offset: number): void {
  let done = 0;
  while (done < bytes.byteLength) {
    done += nodeFs().writeSync(fd, bytes, done, bytes.byteLength - done, offset + done);
  }
}

/** fsync of the folder makes the rename itself durable (best effort where folders cannot be opened). */
function syncFolder(folder: string): void {
  let fd: number;
  try {
    fd = nodeFs().openSync(folder, 'r');
  } catch {
    return;
  }
  try {
    nodeFs().fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic.
  } finally {
    nodeFs().closeSync(fd);
  }
}

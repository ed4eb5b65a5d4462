import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { savePendingNow } from './deferred-saves.js';
import { readRegularFile } from './read-regular-file.js';

/**
 * Files kept next to a cache that only save work (the weight-sources record, the method
 * plans): losing one costs a re-read, so every failure is a warning, never an error.
 */

/**
 * The decoded contents of the memo file at `path`, or undefined when it is absent, not a
 * regular file, over `maxBytes` or fails `decode` (all but absence are reported to `warn`).
 */
export function readMemoFile<T>(
  path: string,
  maxBytes: number,
  decode: (bytes: Uint8Array) => T,
  warn: (message: string) => void,
): T | undefined {
  // A save this process left for later comes first: the reader sees what it knows.
  savePendingNow(path);
  let bytes: Uint8Array;
  try {
    bytes = readRegularFile(path, maxBytes, { file: path, field: '$' });
  } catch (error) {
    const cause = (error as { cause?: NodeJS.ErrnoException }).cause;
    if (cause?.code !== 'ENOENT') warn(`ignoring ${path}: ${(error as Error).message}`);
    return undefined;
  }
  try {
    return decode(bytes);
  } catch (error) {
    warn(`ignoring ${path}: ${(error as Error).message}`);
    return undefined;
  }
}

/**
 * Replaces the file at `path` with `text` (or bytes) by temp file + rename, so readers see the old or
 * the new file, whole. Returns the error instead of throwing (nothing is left behind).
 */
export function replaceMemoFile(path: string, text: string | Uint8Array): Error | undefined {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(temp, text, { flag: 'wx', mode: 0o644 });
    renameSync(temp, path);
    return undefined;
  } catch (error) {
    rmSync(temp, { force: true });
    return error as Error;
  }
}

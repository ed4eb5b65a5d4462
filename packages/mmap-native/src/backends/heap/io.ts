// Positional whole-range reads and writes on an fs descriptor (fs calls may be partial).
import { nodeFs } from '../../node-builtins.js';

/** Reads until target is full or end of file; returns the bytes read. */
export function readAt(fd: number, target: Uint8Array, position: number): number {
  let done = 0;
  while (done < target.length) {
    const n = nodeFs().readSync(fd, target, done, target.length - done, position + done);
    if (n === 0) break; // end of file
    done += n;
  }
  return done;
}

/** Like readAt; past end of file the rest stays zero, as a mapping's tail page would. */
export function readFully(fd: number, target: Uint8Array, position: number): void {
  readAt(fd, target, position);
}

export function writeFully(fd: number, source: Uint8Array, position: number): void {
  let done = 0;
  while (done < source.length) {
    done += nodeFs().writeSync(fd, source, done, source.length - done, position + done);
  }
}

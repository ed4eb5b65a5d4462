import { nodeFs } from '../../files/node-fs.js';

/**
 * A file as the byte ranges written into it: a program's segments stay the buffers they
 * came from, so a `.ptd` larger than the largest ArrayBuffer (4 GiB on Node 20) can still
 * be written. Bytes no piece covers are zeros.
 */
export interface FilePieces {
  readonly length: number;
  readonly pieces: readonly { readonly bytes: Uint8Array; readonly position: number }[];
}

/** The file as one buffer (programs small enough for one, and tests). */
export function assembleFile(file: FilePieces): Uint8Array {
  const out = new Uint8Array(file.length);
  for (const { bytes, position } of file.pieces) out.set(bytes, position);
  return out;
}

/** Writes `file` at `path`, replacing what was there; the gaps between pieces read as zeros. */
export async function writeFilePieces(path: string, file: FilePieces): Promise<void> {
  const handle = await nodeFs().promises.open(path, 'w');
  try {
    for (const { bytes, position } of file.pieces) {
      // A write may take fewer bytes than asked (Linux: at most 2 GiB - 4 KiB a call).
      for (let done = 0; done < bytes.length; ) {
        const { bytesWritten } = await handle.write(
          bytes,
          done,
          bytes.length - done,
          position + done,
        );
        done += bytesWritten;
      }
    }
    await handle.truncate(file.length);
  } finally {
    await handle.close();
  }
}

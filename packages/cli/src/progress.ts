import { createRequire } from 'node:module';
import type CliProgress from 'cli-progress';
import { formatBytes } from './format.js';
import type { OutputStream } from './io.js';

/** Progress of long work in bytes; drawn on stderr only when the caller allows it. */
export interface ByteProgress {
  advance(bytes: number): void;
  stop(): void;
}

export const SILENT_PROGRESS: ByteProgress = { advance() {}, stop() {} };

export function byteProgress(
  label: string,
  totalBytes: number,
  stream: OutputStream,
  enabled: boolean,
): ByteProgress {
  if (!enabled || totalBytes === 0) return SILENT_PROGRESS;
  // Loaded only when a bar is drawn: it costs ~100 ms of start-up otherwise.
  const cliProgress = createRequire(import.meta.url)('cli-progress') as typeof CliProgress;
  const started = Date.now();
  const bar = new cliProgress.SingleBar(
    {
      stream: stream as NodeJS.WritableStream,
      format: `${label} [{bar}] {percentage}% {done} / {total_h} {rate}`,
      hideCursor: true,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let done = 0;
  bar.start(totalBytes, 0, { done: formatBytes(0), total_h: formatBytes(totalBytes), rate: '' });
  return {
    advance(bytes) {
      done += bytes;
      const seconds = (Date.now() - started) / 1000;
      bar.update(done, {
        done: formatBytes(done),
        total_h: formatBytes(totalBytes),
        rate: seconds > 0 ? `${formatBytes(done / seconds)}/s` : '',
      });
    },
    stop() {
      bar.stop();
    },
  };
}

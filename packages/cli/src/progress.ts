import cliProgress from 'cli-progress';
import { formatBytes } from './format.js';

/** Progress of long work in bytes; drawn on stderr only when it is a terminal. */
export interface ByteProgress {
  advance(bytes: number): void;
  stop(): void;
}

const SILENT: ByteProgress = { advance() {}, stop() {} };

export function byteProgress(label: string, totalBytes: number): ByteProgress {
  if (!process.stderr.isTTY || totalBytes === 0) return SILENT;
  const started = Date.now();
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
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

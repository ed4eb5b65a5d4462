import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

/**
 * Why onnxruntime-node cannot be loaded here, or null when it can. Tried in a child process:
 * the bench's own process never loads it.
 */
export function ortLoadProblem(): string | null {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve('onnxruntime-node');
  } catch (error) {
    return `onnxruntime-node is not installed (${(error as Error).message.split('\n')[0]})`;
  }
  try {
    execFileSync(process.execPath, ['-e', `require(${JSON.stringify(entry)})`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return null;
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    const reason = stderr.split('\n').find((line) => /Error/.test(line)) ?? stderr.split('\n')[0];
    return `onnxruntime-node cannot be loaded (${reason ?? (error as Error).message})`;
  }
}

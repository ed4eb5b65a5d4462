import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { selfCommand } from '../src/self-command.js';
import { runMemlayer, spawnMemlayer, tempDir, v3File } from './helpers.js';

// The real executable in fresh processes (src/bin.ts through tsx, so never a stale build):
// what only a process has — exit status, closed pipes, signals.
let dir: string;
let cleanup: () => void;
let v3Path: string;

beforeAll(() => {
  ({ dir, cleanup } = tempDir());
  v3Path = join(dir, 'cache.xpwc');
  writeFileSync(v3Path, v3File().bytes);
});
afterAll(() => cleanup());

describe('memlayer as a process', () => {
  test('--version and an exit status', async () => {
    const version = await runMemlayer(['--version']);
    expect(version.status).toBe(0);
    expect(version.stdout).toMatch(/^memlayer \(@memlayer\/cli \d+\.\d+\.\d+.*\)\n$/);
    const missing = await runMemlayer(['inspect', join(dir, 'nope.xpwc')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
  });

  test('`inspect --json | true` ends quietly when the reader has gone (EPIPE)', () => {
    const self = selfCommand();
    const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;
    const command = [self.command, ...self.args, 'inspect', v3Path, '--json'].map(quote).join(' ');
    const result = spawnSync('bash', ['-c', `set -o pipefail; ${command} | true`], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  test('SIGINT during the demo stops its child and removes its temp folder', async () => {
    const tmp = join(dir, 'tmp');
    spawnSync('mkdir', ['-p', tmp]);
    const child = spawnMemlayer(['demo', '--quick'], { TMPDIR: tmp });
    let stderr = '';
    const started = new Promise<void>((resolve) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        if (stderr.includes('cold start')) resolve();
      });
    });
    const closed = new Promise<{ status: number | null; signal: NodeJS.Signals | null }>(
      (resolve) => child.on('close', (status, signal) => resolve({ status, signal })),
    );
    await Promise.race([started, closed]);
    const demoDirs = () => readdirSync(tmp).filter((name) => name.startsWith('memlayer-'));
    expect(demoDirs(), stderr).toHaveLength(1);
    child.kill('SIGINT');
    const outcome = await closed;
    expect(outcome.signal, stderr).toBe('SIGINT');
    expect(demoDirs()).toEqual([]);
    expect(stderr).toContain(
      'memlayer demo: interrupted by SIGINT; its temporary files are removed',
    );
    expect(stderr).not.toContain('--debug');
  });
});

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { commands } from '../src/commands/index.js';
import { renderTable } from '../src/format.js';
import { closest, editDistance } from '../src/help.js';
import { colorEnabled, progressEnabled } from '../src/io.js';
import { capture, memlayer, tempDir, v3File } from './helpers.js';

const ESC = '\u001b[';
let dir: string;
let cleanup: () => void;
let v3Path: string;

beforeAll(() => {
  ({ dir, cleanup } = tempDir());
  v3Path = join(dir, 'cache.xpwc');
  writeFileSync(v3Path, v3File().bytes);
});
afterAll(() => cleanup());

describe('help', () => {
  test('`help <command>` and `<command> --help` print its usage and one line per option', async () => {
    for (const command of commands) {
      const viaHelp = await memlayer(['help', command.name]);
      const viaFlag = await memlayer([command.name, '--help']);
      expect(viaHelp.status).toBe(0);
      expect(viaFlag.stdout).toBe(viaHelp.stdout);
      expect(viaHelp.stdout).toContain(`Usage: memlayer ${command.name}`);
      for (const [name, option] of Object.entries(command.options)) {
        expect(option.description.length, `${command.name} --${name}`).toBeGreaterThan(10);
        const line = viaHelp.stdout.split('\n').find((l) => l.trimStart().startsWith(`--${name}`));
        expect(line, `${command.name} --${name}`).toContain(option.description.slice(0, 20));
      }
    }
  });

  test('no command prints the help on stderr with exit 2', async () => {
    const bare = await memlayer([]);
    expect(bare.status).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toContain('Usage: memlayer <command>');
  });

  test('the global help lists every command; an unknown help topic is exit 2', async () => {
    const help = await memlayer(['help']);
    expect(help.status).toBe(0);
    for (const command of commands) expect(help.stdout).toContain(command.name);
    const bad = await memlayer(['help', 'inspekt']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('did you mean `memlayer inspect`');
  });

  test('help fits a narrow terminal', async () => {
    const help = await memlayer(['help', 'run'], { io: { columns: 60 } });
    for (const line of help.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(60);
  });
});

describe('did you mean', () => {
  test('a mistyped command names the closest one (exit 2)', async () => {
    const result = await memlayer(['verfy', v3Path]);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      'memlayer: unknown command "verfy"; did you mean `memlayer verify`?\n',
    );
    const far = await memlayer(['frobnicate']);
    expect(far.stderr).toContain('memlayer --help');
    expect(far.stderr).not.toContain('did you mean');
  });

  test('a mistyped option names the closest one (exit 2)', async () => {
    const result = await memlayer(['inspect', v3Path, '--jsn']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('unknown option "--jsn"; did you mean --json?');
    const swapped = await memlayer(['inspect', v3Path, '--jsno']);
    expect(swapped.status).toBe(2);
    expect(swapped.stderr).toContain('unknown option "--jsno"; did you mean --json?');
  });

  test('edit distance counts insertions, deletions, substitutions and swapped neighbours', () => {
    expect(editDistance('inspect', 'inspect')).toBe(0);
    expect(editDistance('inpsect', 'inspect')).toBe(1);
    expect(editDistance('jsno', 'json')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('stat', 'stats')).toBe(1);
    expect(editDistance('', 'run')).toBe(3);
    expect(closest('comapct', ['compact', 'demo'])).toBe('compact');
    expect(closest('ben', ['bench', 'demo'])).toBe('bench');
    expect(closest('jsno', ['json', 'out'])).toBe('json');
    expect(closest('xyz', ['bench', 'demo'])).toBeUndefined();
  });
});

test('--version is the version in package.json', async () => {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const result = await memlayer(['--version']);
  expect(result.stdout).toBe(`memlayer (@memlayer/cli ${manifest.version})\n`);
});

describe('colour', () => {
  const tty = capture({ isTTY: true });
  const pipe = capture();

  test('policy: FORCE_COLOR wins, then NO_COLOR and TERM=dumb, then the TTY', () => {
    expect(colorEnabled(tty, {})).toBe(true);
    expect(colorEnabled(pipe, {})).toBe(false);
    expect(colorEnabled(tty, { NO_COLOR: '1' })).toBe(false);
    expect(colorEnabled(tty, { NO_COLOR: '' })).toBe(true);
    expect(colorEnabled(tty, { TERM: 'dumb' })).toBe(false);
    expect(colorEnabled(pipe, { FORCE_COLOR: '1' })).toBe(true);
    expect(colorEnabled(pipe, { FORCE_COLOR: '' })).toBe(true);
    expect(colorEnabled(tty, { FORCE_COLOR: '0' })).toBe(false);
    expect(colorEnabled(pipe, { FORCE_COLOR: '1', NO_COLOR: '1' })).toBe(true);
  });

  test('verify output is coloured only when asked', async () => {
    const plain = await memlayer(['verify', v3Path], { env: { NO_COLOR: '' } });
    expect(plain.stdout).not.toContain(ESC);
    const forced = await memlayer(['verify', v3Path], { env: { FORCE_COLOR: '1' } });
    expect(forced.stdout).toContain(`${ESC}32m`);
    const onTty = await memlayer(['verify', v3Path], {
      env: { NO_COLOR: '', TERM: 'dumb' },
      io: { stdout: capture({ isTTY: true }) },
    });
    expect(onTty.status).toBe(0);
  });
});

describe('progress bars', () => {
  test('policy: a terminal, not TERM=dumb, not CI unless FORCE_COLOR', () => {
    const tty = capture({ isTTY: true });
    expect(progressEnabled(tty, {})).toBe(true);
    expect(progressEnabled(capture(), { FORCE_COLOR: '1' })).toBe(false);
    expect(progressEnabled(tty, { TERM: 'dumb' })).toBe(false);
    expect(progressEnabled(tty, { CI: 'true' })).toBe(false);
    expect(progressEnabled(tty, { CI: 'true', FORCE_COLOR: '1' })).toBe(true);
  });

  test('verify --full draws no escape codes on a CI terminal, and draws them on a real one', async () => {
    const ciErr = capture({ isTTY: true, columns: 80 });
    await memlayer(['verify', v3Path, '--full'], { env: { CI: 'true' }, io: { stderr: ciErr } });
    expect(ciErr.text()).not.toContain('\u001b');
    const ttyErr = capture({ isTTY: true, columns: 80 });
    const result = await memlayer(['verify', v3Path, '--full'], { io: { stderr: ttyErr } });
    expect(result.status).toBe(0);
    expect(ttyErr.text()).toContain('\u001b');
  });
});

describe('tables fit the terminal', () => {
  const headers = ['figure', 'cold', 'warm', 'notes'];
  const rows = [
    [
      'init: pack or map the weights',
      '61.76 ms',
      '6.15 ms',
      'warm/cold 0.100x; heap-only 14.99 ms',
    ],
    ['cache hits', '0', '8', ''],
  ];

  test('a table that fits is aligned columns', () => {
    const text = renderTable(headers, rows, 200);
    expect(text.split('\n')[1]).toMatch(/^-+ {2}-+/);
  });

  test('a narrow terminal gets "header: value" rows, each line within the width', () => {
    const text = renderTable(headers, rows, 40);
    expect(text).toContain('init: pack or map the weights\n  cold: 61.76 ms\n  warm: 6.15 ms');
    expect(text).not.toContain('notes: \n');
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(40);
  });

  test('inspect at 50 columns: every line fits', async () => {
    const result = await memlayer(['inspect', v3Path], { io: { columns: 50 } });
    expect(result.status).toBe(0);
    for (const line of result.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(50);
    expect(result.stdout).toContain('  offset: 8192');
  });

  test('a table too wide for the terminal packs its "header: value" pairs: 3 lines per entry at 80 columns', () => {
    const wide = [
      'layer0.weightlayer0.bias',
      '8192',
      '5000',
      '0x00001000',
      '0x0000abcd',
      '0x7a4ab48d',
      'op 63 2048x2048 nr16 kr1 sr1',
    ];
    const text = renderTable(
      ['name', 'offset', 'size', 'seed', 'fingerprint', 'crc32c', 'layout'],
      [wide, wide],
      80,
      { packed: true },
    );
    expect(text.split('\n')).toHaveLength(6);
    expect(text).toContain(
      'layer0.weightlayer0.bias\n  offset: 8192  size: 5000  seed: 0x00001000',
    );
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
  });
});

describe('compact --out', () => {
  test('refuses an existing file without --force and leaves it untouched', async () => {
    const out = join(dir, 'exists.xpwc');
    writeFileSync(out, 'precious');
    const refused = await memlayer(['compact', v3Path, '--out', out]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('already exists');
    expect(refused.stderr).toContain('--force');
    expect(readFileSync(out, 'utf8')).toBe('precious');
    const forced = await memlayer(['compact', v3Path, '--out', out, '--force']);
    expect(forced.status, forced.stderr).toBe(0);
    expect(readFileSync(out).subarray(0, 4).toString('latin1')).not.toBe('prec');
    expect(leftovers()).toEqual([]);
  });

  test('a failed compaction leaves neither the output nor a temp file', async () => {
    const bad = join(dir, 'not-a-cache.bin');
    writeFileSync(bad, 'not a cache file, not even close to one');
    const out = join(dir, 'never.xpwc');
    const result = await memlayer(['compact', bad, '--out', out]);
    expect(result.status).not.toBe(0);
    expect(existsSync(out)).toBe(false);
    expect(leftovers()).toEqual([]);
  });
});

test('bench only says where the benchmark suite went (exit 2, nothing written)', async () => {
  const result = await memlayer(['bench'], { io: { cwd: dir } });
  expect(result.status).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toContain('pnpm bench');
  expect(existsSync(join(dir, 'docs'))).toBe(false);
  // Old invocations get the same pointer, not "unknown option".
  const old = await memlayer(['bench', '--quick', '--only', 'mmap', '--out', join(dir, 'r')]);
  expect(old.status).toBe(2);
  expect(old.stderr).toContain('pnpm bench');
  expect(existsSync(join(dir, 'r'))).toBe(false);
  const help = await memlayer(['help', 'bench']);
  expect(help.status).toBe(0);
  expect(help.stdout).toContain('pnpm bench');
});

function leftovers(): string[] {
  return readdirSync(dir).filter((name) => name.endsWith('.tmp'));
}

import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchMain } from '../src/cli.js';

interface RunResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** One bench invocation in this process, on the sources, with captured output. */
async function bench(args: string[], cwd = process.cwd()): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const status = await benchMain(args, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    stderrIsTTY: false,
    env: {},
    cwd,
  });
  return { status, stdout, stderr };
}

interface ReportJson {
  quick: boolean;
  machine: { cpuModel: string; cores: number; node: string; date: string };
  sections: Array<{
    id: string;
    status: string;
    figures: Array<{ label: string; value: number | null; unit: string; method: string }>;
    comparisons: Array<{ label: string; verdict: string; method: string }>;
  }>;
}

describe('bench', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memlayer-bench-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'report');
  // Cheap in-process sections only (the others start measurement children, which run from a
  // build); none of these assertions look at a timing or a ratio.
  let run: RunResult;
  beforeAll(async () => {
    run = await bench(['--quick', '--only', 'device,mmap', '--out', out]);
  });

  it('exits 0 and prints a markdown table per section on stdout', async () => {
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('## 5. mmap-native');
    expect(run.stdout).toContain('## 6. Device runner');
    expect(run.stdout).toMatch(/\| figure \| value \| unit \| how it was measured \|/);
  });

  it('writes report.md, report.json and ratios.svg with the machine and the figures', async () => {
    for (const file of ['report.md', 'report.json', 'ratios.svg']) {
      expect(existsSync(join(out, file))).toBe(true);
    }
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as ReportJson;
    expect(report.quick).toBe(true);
    expect(report.machine.cores).toBeGreaterThan(0);
    expect(report.machine.node).toBe(process.version);
    expect(report.sections.map((section) => section.id)).toEqual(['mmap', 'device']);
    for (const section of report.sections) {
      expect(section.status).toBe('measured');
      expect(section.figures.length).toBeGreaterThan(0);
      for (const figure of [...section.figures, ...section.comparisons]) {
        expect(figure.method.length).toBeGreaterThan(0);
      }
    }
    const labels = report.sections.flatMap((section) => section.figures.map((f) => f.label));
    expect(labels).toContain('sequential: fs.readFileSync + touch');
    expect(labels.some((label) => label.includes('device bytes uploaded per registration'))).toBe(
      true,
    );
    const markdown = readFileSync(join(out, 'report.md'), 'utf8');
    expect(markdown).toContain(report.machine.cpuModel);
    expect(markdown).toContain('## Main ratios');
    const svg = readFileSync(join(out, 'ratios.svg'), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('</svg>');
  });

  it('--json prints the JSON document on stdout', async () => {
    const json = await bench(['--quick', '--only', 'device', '--json', '--out', out]);
    expect(json.status).toBe(0);
    const report = JSON.parse(json.stdout) as ReportJson;
    expect(report.sections.map((section) => section.id)).toEqual(['device']);
  });

  it('rejects an unknown section with exit code 2', async () => {
    const bad = await bench(['--only', 'nope', '--out', out]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--only');
  });

  it('without --out writes to a new temp folder and prints it, not into the cwd', async () => {
    const cwd = join(dir, 'cwd');
    mkdirSync(cwd);
    const result = await bench(['--quick', '--only', 'device'], cwd);
    expect(result.status, result.stderr).toBe(0);
    const written = /Report written to (\S+):/.exec(result.stdout)?.[1];
    expect(written).toBeDefined();
    expect(existsSync(join(written as string, 'report.md'))).toBe(true);
    rmSync(written as string, { recursive: true, force: true });
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('accepts the `--` pnpm passes through and prints its usage on --help', async () => {
    const help = await bench(['--quick', '--out', out, '--', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--only <ids>');
    const bad = await bench(['--nope']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--nope');
  });
});

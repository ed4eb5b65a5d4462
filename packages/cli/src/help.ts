import type { Command } from './command.js';
import { usageLine } from './command.js';
import { wrap } from './format.js';

export const GLOBAL_OPTIONS: [string, string][] = [
  ['--help, -h', 'print the usage of memlayer or of a command'],
  ['--version, -v', 'print the version'],
  ['--debug', 'print the stack of an unexpected error'],
];

export function globalHelp(commands: Command[], columns: number | undefined): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    'memlayer — packed-weights caches, programs and the memory they use',
    '',
    'Usage: memlayer <command> [options]',
    '       memlayer help <command>',
    '',
    'Commands:',
    ...commands.flatMap((command) =>
      describe(`  ${command.name.padEnd(width)}  `, command.summary, columns),
    ),
    '',
    'Options of every command:',
    ...GLOBAL_OPTIONS.flatMap(([flag, text]) => describe(`  ${flag.padEnd(15)} `, text, columns)),
    '',
    'Exit codes: 0 ok, 1 problems found or command failed, 2 bad usage or unreadable input.',
  ].join('\n');
}

/** `memlayer help <command>` and `<command> --help`: usage, then one line per option. */
export function commandHelp(command: Command, columns: number | undefined): string {
  const flags = Object.entries(command.options).map(([name, option]) => {
    const short = option.short ? `-${option.short}, ` : '';
    const value = option.type === 'string' ? ` ${option.value ?? '<value>'}` : '';
    return [`${short}--${name}${value}`, option.description] as const;
  });
  const all = [...flags, ...GLOBAL_OPTIONS.slice(0, 1), ...GLOBAL_OPTIONS.slice(2)];
  const width = Math.max(...all.map(([flag]) => flag.length));
  return [
    ...wrap(`memlayer ${command.name}: ${command.summary}`, columns ?? Infinity, 2),
    '',
    ...wrap(`Usage: ${usageLine(command)}`, columns ?? Infinity, 7),
    '',
    'Options:',
    ...all.flatMap(([flag, text]) => describe(`  ${flag.padEnd(width)}  `, text, columns)),
  ].join('\n');
}

/** "  name  text", the text wrapped under itself when the terminal is narrow. */
function describe(head: string, text: string, columns: number | undefined): string[] {
  const room = (columns ?? Infinity) - head.length;
  if (room < 20) return [head.trimEnd(), ...wrap(text, (columns ?? 80) - 4).map((l) => `    ${l}`)];
  return wrap(text, room).map(
    (line, index) => (index === 0 ? head : ' '.repeat(head.length)) + line,
  );
}

/**
 * Edit distance with adjacent transpositions (optimal string alignment): an insertion, a
 * deletion, a substitution or two neighbouring letters swapped each cost 1, so `--jsno`
 * is one edit from `--json`, as a typing slip is.
 */
export function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      let distance = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        substitution,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        distance = Math.min(distance, (before[j - 2] as number) + 1);
      }
      current.push(distance);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length] as number;
}

/** The closest known name when it is close enough to be a typo (or a prefix), else undefined. */
export function closest(input: string, names: string[]): string | undefined {
  const limit = Math.max(1, Math.floor(input.length / 3));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of names) {
    const distance = name.startsWith(input) && input.length >= 2 ? 0.5 : editDistance(input, name);
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

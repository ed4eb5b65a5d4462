import type { ParseArgsConfig } from 'node:util';

/** What a command gets: parsed flags, positionals, and where to write. */
export interface CommandContext {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(context: CommandContext): Promise<number> | number;
}

export function stringFlag(context: CommandContext, name: string): string | undefined {
  const value = context.values[name];
  return typeof value === 'string' ? value : undefined;
}

export function boolFlag(context: CommandContext, name: string): boolean {
  return context.values[name] === true;
}

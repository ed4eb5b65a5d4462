/** ANSI styling for stdout, off when NO_COLOR is set or stdout is not a terminal. */
export function colorEnabled(stream: NodeJS.WriteStream = process.stdout): boolean {
  if ('NO_COLOR' in process.env && process.env['NO_COLOR'] !== '') return false;
  return stream.isTTY === true;
}

const CODES = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
} as const;
export type Style = keyof typeof CODES;

export function style(text: string, name: Style, enabled = colorEnabled()): string {
  if (!enabled) return text;
  const [open, close] = CODES[name];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

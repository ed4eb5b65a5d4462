const CODES = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
} as const;
export type Style = keyof typeof CODES;

/** ANSI styling, applied only when `enabled` (see colorEnabled in io.ts for the policy). */
export function style(text: string, name: Style, enabled: boolean): string {
  if (!enabled) return text;
  const [open, close] = CODES[name];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

/**
 * node:fs, taken when a file is first touched: importing its ES module facade costs about
 * 1 ms, a tenth of this package's import, and Node has the module loaded anyway.
 */
export function nodeFs(): typeof import('node:fs') {
  return process.getBuiltinModule('node:fs');
}

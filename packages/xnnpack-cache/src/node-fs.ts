/**
 * node:fs, taken when a file is first touched: importing its ES module facade reads every
 * export (loading fs streams), about 1 ms of a first load, and Node has the module anyway.
 */
export function nodeFs(): typeof import('node:fs') {
  return process.getBuiltinModule('node:fs');
}

// Node's built-in modules, taken when first used (process.getBuiltinModule). An import of
// node:fs builds its ES module facade, which reads every export and so loads fs streams:
// ~1.3 ms of the package's first load, before any file is opened.
export function nodeFs(): typeof import('node:fs') {
  return process.getBuiltinModule('node:fs');
}

export function nodeOs(): typeof import('node:os') {
  return process.getBuiltinModule('node:os');
}

export function nodeUtil(): typeof import('node:util') {
  return process.getBuiltinModule('node:util');
}

/** buffer.constants.MAX_LENGTH: the longest ArrayBuffer this Node makes. */
export function maxBufferLength(): number {
  return process.getBuiltinModule('node:buffer').constants.MAX_LENGTH;
}

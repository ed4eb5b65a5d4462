// node:util is loaded by the first message that needs it, not by importing the packages.
function inspect(value: unknown, options?: import('node:util').InspectOptions): string {
  return process.getBuiltinModule('node:util').inspect(value, options);
}

/** Longest string shown whole in a message; longer ones are cut (a message stays short). */
const MAX_SHOWN_STRING = 40;

/**
 * The "Z" of "Expected X for Y but received Z", as Node's ERR_INVALID_ARG_TYPE renders it:
 * `number -1`, `string 'rw'`, `bigint -5n`, `an instance of Uint8Array (16 bytes)`,
 * `an instance of Array (3 items)`, `function f`, `null`, `undefined`.
 */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return `function ${value.name || '<anonymous>'}`;
  if (typeof value === 'string') {
    const shown = value.length > MAX_SHOWN_STRING ? `${value.slice(0, MAX_SHOWN_STRING)}…` : value;
    return `string ${inspect(shown)}`;
  }
  if (typeof value === 'object') {
    const name = (value as object).constructor?.name;
    if (!name) return inspect(value, { depth: 0, breakLength: Number.POSITIVE_INFINITY });
    if (ArrayBuffer.isView(value)) return `an instance of ${name} (${value.byteLength} bytes)`;
    if (Array.isArray(value)) return `an instance of ${name} (${value.length} items)`;
    return `an instance of ${name}`;
  }
  return `${typeof value} ${inspect(value)}`;
}

/** "Expected <expected> for <what> but received <value>": one wording in every package. */
export function expectedButReceived(expected: string, what: string, received: unknown): string {
  return `Expected ${expected} for ${what} but received ${describeValue(received)}`;
}

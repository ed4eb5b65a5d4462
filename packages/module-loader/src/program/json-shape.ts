/**
 * JSON.parse builds the whole value before anything can be checked, and small inputs can
 * build large values: 16 MiB of `[` nests 16 million arrays (about 780 MiB of heap), 16 MiB
 * of `[],` makes 5 million of them. A manifest is a shallow tree of at most a few objects per
 * graph node, so its shape is bounded first, in one pass over the text, before parsing.
 */

/** Deepest nesting a manifest needs is 5 (root → methods → method → graph → node); slack for growth. */
export const MAX_JSON_DEPTH = 32;
/** Objects and arrays in one manifest: a few per graph node at the graph-node limit. */
export const MAX_JSON_CONTAINERS = 500_000;

export type JsonShapeProblem = { readonly kind: 'depth' | 'containers'; readonly offset: number };

/**
 * The first place the text exceeds the bounds (outside string literals), or null. A string
 * literal is skipped with indexOf (its closing quote is the first one not escaped by an odd
 * run of backslashes), so only the few characters between strings are read one by one.
 */
export function findJsonShapeProblem(text: string): JsonShapeProblem | null {
  let depth = 0;
  let containers = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i === -1) return null; // unterminated: JSON.parse refuses it
        let before = i - 1;
        while (text.charCodeAt(before) === 0x5c /* \ */) before--;
        if (((i - 1 - before) & 1) === 0) break;
      }
    } else if ((c | 0x20) === 0x7b /* [ or { */) {
      if (++depth > MAX_JSON_DEPTH) return { kind: 'depth', offset: i };
      if (++containers > MAX_JSON_CONTAINERS) return { kind: 'containers', offset: i };
    } else if ((c | 0x20) === 0x7d /* ] or } */) depth--;
  }
  return null;
}

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

/** The first place the text exceeds the bounds (outside string literals), or null. */
export function findJsonShapeProblem(text: string): JsonShapeProblem | null {
  let depth = 0;
  let containers = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > MAX_JSON_DEPTH) return { kind: 'depth', offset: i };
      if (++containers > MAX_JSON_CONTAINERS) return { kind: 'containers', offset: i };
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return null;
}

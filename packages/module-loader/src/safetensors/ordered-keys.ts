/**
 * Keys in the order they were added. A weights cache asks for a build's keys in that order
 * (one build walks the graph twice, in the same order), so the key after the last one found
 * is tried first: one comparison. A map by key (first position of each key: equal bytes,
 * one entry) is made only for a look-up out of that order, or for names().
 */
export class OrderedKeys {
  readonly #keys: string[] = [];
  /** Position of the next key expected by find(). */
  #next = 0;
  #byKey: Map<string, number> | null = null;

  /** Appends a key. */
  add(key: string): void {
    this.#keys.push(key);
    if (this.#byKey !== null && !this.#byKey.has(key)) this.#byKey.set(key, this.#keys.length - 1);
  }

  /** The position of `key` (the expected one, else its first), or -1. */
  find(key: string): number {
    let at = this.#next;
    if (this.#keys[at] !== key) {
      const found = this.#index().get(key);
      if (found === undefined) return -1;
      at = found;
    }
    this.#next = at + 1;
    return at;
  }

  /** The key at a position. */
  at(position: number): string {
    return this.#keys[position] as string;
  }

  /** Each distinct key once. */
  names(): Iterable<string> {
    return this.#index().keys();
  }

  #index(): Map<string, number> {
    if (this.#byKey === null) {
      const byKey = new Map<string, number>();
      this.#keys.forEach((key, at) => {
        if (!byKey.has(key)) byKey.set(key, at);
      });
      this.#byKey = byKey;
    }
    return this.#byKey;
  }
}

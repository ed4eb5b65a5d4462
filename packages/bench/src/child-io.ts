// The child side of the JSON-line protocol of children.ts: messages to the parent on stdout,
// words from it on stdin.
import { createInterface } from 'node:readline';
import { CHILD_MESSAGE } from './child-protocol.js';

export interface ParentChannel {
  send(type: string, body: unknown): void;
  /** Resolves when the parent writes `word` on a line; exits the process if the parent goes away. */
  waitFor(word: string): Promise<void>;
}

export function parentChannel(): ParentChannel {
  // Made at the first wait: a child that never waits never reads its stdin.
  let lines: AsyncIterator<string> | null = null;
  return {
    send(type, body) {
      process.stdout.write(`${CHILD_MESSAGE}${JSON.stringify({ type, body })}\n`);
    },
    async waitFor(word) {
      lines ??= createInterface({ input: process.stdin })[Symbol.asyncIterator]();
      for (;;) {
        const next = await lines.next();
        if (next.done) process.exit(0); // the parent went away
        if (next.value.trim() === word) return;
      }
    },
  };
}

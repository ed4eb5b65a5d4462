import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ALLOCATION_NODE_FLAGS } from './allocations.js';
import { CHILD_MESSAGE, type ChildTask } from './child-protocol.js';

/** The built child script, also when this module runs from its TypeScript source (tests). */
const CHILD_SCRIPT = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? '../dist/child.js' : './child.js', import.meta.url),
);

interface Message {
  type: string;
  body: unknown;
}

/** A measurement child process; messages arrive in order, one JSON line each. */
export class BenchChild {
  readonly process: ChildProcess;
  readonly #queue: Message[] = [];
  readonly #waiters: Array<(message: Message | Error) => void> = [];
  #stderr = '';
  #failure: Error | null = null;
  readonly #exited: Promise<void>;

  /** `script`: another built child entry speaking the same protocol (child-io.ts). */
  constructor(task: ChildTask | { readonly kind: string }, script = CHILD_SCRIPT) {
    const flags = task.kind === 'allocations' ? ALLOCATION_NODE_FLAGS : [];
    this.process = spawn(process.execPath, [...flags, script, JSON.stringify(task)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.#exited = new Promise((resolve) => this.process.once('close', () => resolve()));
    // A child that already exited closes its stdin: a late write must not crash the bench.
    this.process.stdin?.on('error', () => {});
    const stdout = this.process.stdout;
    if (stdout) {
      createInterface({ input: stdout }).on('line', (line) => {
        if (line.startsWith(CHILD_MESSAGE)) {
          this.#deliver(JSON.parse(line.slice(CHILD_MESSAGE.length)) as Message);
        }
      });
    }
    this.process.stderr?.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString()).slice(-4000);
    });
    this.process.on('exit', (code, signal) => {
      this.#fail(
        new Error(
          `measurement child exited (${signal ?? `code ${code}`}) before answering${this.#stderr ? `: ${this.#stderr.trim()}` : ''}`,
        ),
      );
    });
    this.process.on('error', (error) => this.#fail(error));
  }

  get pid(): number {
    return this.process.pid ?? -1;
  }

  /** The next message, which must be of `type` (an error message from the child throws). */
  async next<T>(type: string): Promise<T> {
    const message =
      this.#queue.shift() ??
      (this.#failure
        ? this.#failure
        : await new Promise<Message | Error>((resolve) => this.#waiters.push(resolve)));
    if (message instanceof Error) throw message;
    if (message.type === 'error') {
      throw new Error(`measurement child failed: ${(message.body as { message: string }).message}`);
    }
    if (message.type !== type)
      throw new Error(`expected "${type}" from the child, got "${message.type}"`);
    return message.body as T;
  }

  send(word: string): void {
    const stdin = this.process.stdin;
    if (stdin && !stdin.destroyed && stdin.writable) stdin.write(`${word}\n`);
  }

  /** Asks a holding child to exit (others exit on their own) and waits until it has. */
  async exit(): Promise<void> {
    if (this.process.exitCode === null && this.process.signalCode === null) {
      this.send('exit');
      this.process.stdin?.end();
    }
    await this.#exited;
  }

  #deliver(message: Message): void {
    const waiter = this.#waiters.shift();
    if (waiter) waiter(message);
    else this.#queue.push(message);
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const waiter of this.#waiters.splice(0)) waiter(error);
  }
}

/** Runs one task in a fresh process and returns its result. */
export async function runInChild<T>(
  task: ChildTask | { readonly kind: string },
  script = CHILD_SCRIPT,
): Promise<T> {
  const child = new BenchChild(task, script);
  try {
    return await child.next<T>('result');
  } finally {
    await child.exit();
  }
}

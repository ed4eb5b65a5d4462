/**
 * Scratch memory for the intermediate values of graph methods (every value that is not a
 * method output), reused from run to run instead of allocated per node per run; each
 * method places its values in it with an IntermediateArena. How widely one workspace is
 * shared follows XNNPACK's workspace_sharing_mode: 0 Disabled = one per method, 1 PerModel
 * = one per loaded program, 2 Global = one per backend. Sharing is safe because a run uses
 * its intermediates only while it executes, and runs do not interleave.
 */
export class XnnpackWorkspace {
  #buffer = new ArrayBuffer(0);

  /** Bytes held now (the largest run seen so far that used this workspace). */
  get byteLength(): number {
    return this.#buffer.byteLength;
  }

  /**
   * The buffer, first replaced by one of `bytes` when it is smaller. Views of the buffer
   * returned stay valid for a run; a later call may return another.
   */
  reserve(bytes: number): ArrayBuffer {
    if (bytes > this.#buffer.byteLength) this.#buffer = new ArrayBuffer(bytes);
    return this.#buffer;
  }

  /**
   * Views of `sizes[i]` floats each, laid out one after another; grows the buffer first, so
   * every view of one run stays valid for that run.
   */
  views(sizes: readonly number[]): Float32Array[] {
    let total = 0;
    for (const size of sizes) total += size;
    this.reserve(total * 4);
    const out: Float32Array[] = [];
    let at = 0;
    for (const size of sizes) {
      out.push(new Float32Array(this.#buffer, at * 4, size));
      at += size;
    }
    return out;
  }
}

/** Hands out workspaces by sharing mode. */
export class XnnpackWorkspaces {
  #global: XnnpackWorkspace | null = null;
  readonly #perProgram = new WeakMap<object, XnnpackWorkspace>();

  acquire(mode: number, program: object): XnnpackWorkspace {
    if (mode === 2) {
      this.#global ??= new XnnpackWorkspace();
      return this.#global;
    }
    if (mode === 1) {
      let workspace = this.#perProgram.get(program);
      if (workspace === undefined) {
        workspace = new XnnpackWorkspace();
        this.#perProgram.set(program, workspace);
      }
      return workspace;
    }
    return new XnnpackWorkspace();
  }
}

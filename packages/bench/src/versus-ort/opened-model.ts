/** A model a child has started, whatever the engine. */
export interface OpenedModel {
  readonly importMs: number;
  readonly readyMs: number;
  forward(input: Float32Array, batch: number): Promise<Float32Array>;
  close(): Promise<void>;
}

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { exportProgram } from '@memlayer/module-loader';
import { writeModel } from '../model.js';
import { type OnnxFiles, onnxMlpFiles, writeOnnxMlp } from '../onnx/mlp-onnx.js';
import type { ModelSpec } from '../types.js';

/** Every layer is linear + relu: the graph both engines run. */
export const VERSUS_MODEL_OPTIONS = { relu: true } as const;

export interface VersusFiles {
  /** memlayer: the JSON program exported as .pte + .ptd, and its packed cache file. */
  readonly pte: string;
  readonly ptd: string;
  readonly cachePath: string;
  /** onnxruntime-node: the ONNX model, its external data, and where it saves its own files. */
  readonly onnx: OnnxFiles;
  readonly onnxDir: string;
  /** A one-layer JSON program for option probes. */
  readonly probeProgram: string;
}

/**
 * Writes (or reuses, when a previous run left them in `dir`) the same model for both
 * engines: safetensors + JSON program exported as .pte/.ptd, and ONNX + external data.
 * Each writer's last file marks it complete.
 */
export async function prepareVersusFiles(
  dir: string,
  spec: ModelSpec,
  progress: (message: string) => void,
): Promise<VersusFiles> {
  const memlayerDir = join(dir, 'memlayer');
  const program = join(memlayerDir, 'program.json');
  const pte = join(memlayerDir, 'program.pte');
  const ptd = join(memlayerDir, 'program.ptd');
  if (!existsSync(pte)) {
    progress(`writing the ${spec.label} model as a JSON program and exporting it as .pte + .ptd`);
    writeModel(memlayerDir, spec, VERSUS_MODEL_OPTIONS);
    await exportProgram(program);
  }
  const onnxDir = join(dir, 'onnx');
  const onnx = onnxMlpFiles(onnxDir, spec);
  if (!existsSync(onnx.model)) {
    progress(`writing the ${spec.label} model as ONNX`);
    writeOnnxMlp(onnxDir, spec, VERSUS_MODEL_OPTIONS);
  }
  const probeProgram = join(dir, 'probe', 'program.json');
  if (!existsSync(probeProgram)) {
    writeModel(join(dir, 'probe'), { label: 'probe', layers: 1, dim: 8 });
  }
  return { pte, ptd, cachePath: join(dir, 'memlayer.xpwc'), onnx, onnxDir, probeProgram };
}

// The ways onnxruntime-node can start the ONNX model, as InferenceSession options. Config
// entries (`extra`, flattened to "session.<key>") are those of onnxruntime's
// include/onnxruntime/core/session/onnxruntime_session_options_config_keys.h:
// kOrtSessionOptionsOptimizedModelExternalInitializersFileName,
// kOrtSessionOptionsOptimizedModelExternalInitializersMinSizeInBytes and
// kOrtSessionOptionsSavePrePackedConstantInitializers.
import { basename, join } from 'node:path';

/**
 * - plain: the ONNX model with its external data (page-aligned: onnxruntime maps it), graph
 *   optimized and weights prepacked on the heap at every start;
 * - optimized: the model a previous start saved with optimizedModelFilePath (offline mode of
 *   https://onnxruntime.ai/docs/performance/model-optimizations/graph-optimizations.html),
 *   loaded with optimizations disabled; weights still prepacked at every start;
 * - prepacked: the same, saved with session.save_external_prepacked_constant_initializers = 1:
 *   the prepacked weights are in its external data file and later starts map them.
 */
export const ORT_STARTS = ['plain', 'optimized', 'prepacked'] as const;
export type OrtStartKind = (typeof ORT_STARTS)[number];

export interface OrtModelFiles {
  readonly model: string;
  readonly data: string;
}

/** The files a start of `kind` opens: the written model, or what a previous start saved. */
export function ortFiles(dir: string, plain: OrtModelFiles, kind: OrtStartKind): OrtModelFiles {
  if (kind === 'plain') return plain;
  return { model: join(dir, `${kind}.onnx`), data: join(dir, `${kind}.onnx.data`) };
}

function baseOptions(threads: number): Record<string, unknown> {
  return {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    // One graph, one request at a time: no inter-op pool.
    interOpNumThreads: 1,
    executionMode: 'sequential',
    // Warnings only go to stderr (saving an optimized model warns that it is machine-specific).
    logSeverityLevel: 3,
  };
}

/** Options of a start that opens the files of `kind` (written before). */
export function loadOptions(kind: OrtStartKind, threads: number): Record<string, unknown> {
  return {
    ...baseOptions(threads),
    // A saved model is already optimized: loading it with optimizations on redoes the work.
    graphOptimizationLevel: kind === 'plain' ? 'all' : 'disabled',
  };
}

/** Options of a start of the plain model that also saves the files of `kind`. */
export function saveOptions(
  kind: Exclude<OrtStartKind, 'plain'>,
  files: OrtModelFiles,
  threads: number,
): Record<string, unknown> {
  const session: Record<string, string> = {
    optimized_model_external_initializers_file_name: basename(files.data),
    optimized_model_external_initializers_min_size_in_bytes: '1024',
  };
  if (kind === 'prepacked') session['save_external_prepacked_constant_initializers'] = '1';
  return {
    ...baseOptions(threads),
    graphOptimizationLevel: 'all',
    optimizedModelFilePath: files.model,
    extra: { session },
  };
}

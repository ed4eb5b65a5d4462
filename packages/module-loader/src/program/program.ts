import { dirname } from 'node:path';
import { ModuleLoaderError } from '../errors.js';
import { ContainedPaths, resolveContainedPath } from '../files/contained-path.js';
import { MAX_CALLABLE_BYTES } from '../files/limits.js';
import { readRegularFile } from '../files/read-regular-file.js';
import { SafetensorsFile } from '../safetensors/file.js';
import { SafetensorsNamedDataMap } from '../safetensors/named-data.js';
import { WeightCounters, type WeightStats } from '../safetensors/weight-stats.js';
import {
  type GraphNode,
  MAX_MANIFEST_BYTES,
  type ProgramManifest,
  parseManifest,
} from './manifest.js';

/**
 * 'minimal' checks the manifest and stats the weight files (their headers are read when a
 * method first needs them);
 * 'internal-consistency' also reads the tables now and checks that every tensor a graph
 * names exists in the weights.
 */
export type ProgramVerification = 'minimal' | 'internal-consistency';

export interface LoadedProgram {
  /** Path of the manifest. */
  readonly path: string;
  readonly manifest: ProgramManifest;
  /** The safetensors tensors of the program, zero-copy views of mapped files. */
  readonly namedData: SafetensorsNamedDataMap;
  /** What loading this program's weights has cost so far (stats, headers, hashing, maps). */
  weightStats(): WeightStats;
  /**
   * Reads a regular file the manifest names (relative to it, contained in its folder after
   * resolving symlinks), e.g. a ChipCallable; at most `maxBytes` (default MAX_CALLABLE_BYTES).
   */
  readFile(relativePath: string, field: string, maxBytes?: number): Uint8Array;
  /** Unmaps the weights. */
  close(): void;
}

/**
 * Loads a manifest and stats its weight files (nothing is opened or mapped until a method
 * needs tensor bytes); on any error nothing stays open.
 */
export function loadProgram(path: string, verification: ProgramVerification): LoadedProgram {
  const ctx = { file: path, field: '$' };
  const bytes = readRegularFile(path, MAX_MANIFEST_BYTES, ctx);
  const manifest = parseManifest(new TextDecoder().decode(bytes), path);
  const dir = dirname(path);
  const files: SafetensorsFile[] = [];
  const counters = new WeightCounters();
  try {
    const contained = new ContainedPaths(dir, { file: path, field: '$' });
    for (let index = 0; index < manifest.weights.length; index++) {
      const ctx = { file: path, field: `weights[${index}]` };
      const weights = contained.resolve(manifest.weights[index] as string, ctx);
      files.push(SafetensorsFile.at(weights.path, counters, ctx, { stat: weights.stat }));
    }
    const namedData = new SafetensorsNamedDataMap(files);
    if (verification === 'internal-consistency') {
      namedData.resolve();
      checkReferences(manifest, namedData, path);
    }
    return {
      path,
      manifest,
      namedData,
      weightStats: () => ({ ...counters.stats }),
      readFile: (relativePath, field, maxBytes = MAX_CALLABLE_BYTES) => {
        const ctx = { file: path, field };
        return readRegularFile(resolveContainedPath(dir, relativePath, ctx), maxBytes, ctx);
      },
      close: () => namedData.close(),
    };
  } catch (error) {
    for (const file of files) file.close();
    throw error;
  }
}

/** Every tensor a linear node names is in the weights (one lookup per name, no copies). */
function checkReferences(
  manifest: ProgramManifest,
  namedData: SafetensorsNamedDataMap,
  path: string,
): void {
  for (const [name, method] of manifest.methods) {
    if (method.kind !== 'graph') continue;
    const graph = method.graph;
    for (let index = 0; index < graph.length; index++) {
      const node = graph[index] as GraphNode;
      if (node.op !== 'linear') continue;
      if (namedData.get(node.weight) === undefined)
        missingTensor(path, name, index, 'weight', node.weight);
      if (node.bias !== undefined && namedData.get(node.bias) === undefined) {
        missingTensor(path, name, index, 'bias', node.bias);
      }
    }
  }
}

function missingTensor(
  path: string,
  method: string,
  index: number,
  role: 'weight' | 'bias',
  tensor: string,
): never {
  const field = `methods.${method}.graph[${index}].${role}`;
  throw new ModuleLoaderError(
    'ERR_MANIFEST_INVALID',
    `${path}: ${field}: no f32 tensor "${tensor}" in the weights`,
    { file: path, field },
  );
}

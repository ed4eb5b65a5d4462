import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { ModuleLoaderError } from '../errors.js';
import { SafetensorsFile, SafetensorsNamedDataMap } from '../safetensors/file.js';
import { type ProgramManifest, parseManifest } from './manifest.js';

/**
 * 'minimal' checks the manifest and the weight files' headers; 'internal-consistency'
 * also checks that every tensor a graph names exists in the weights.
 */
export type ProgramVerification = 'minimal' | 'internal-consistency';

export interface LoadedProgram {
  /** Path of the manifest. */
  readonly path: string;
  readonly manifest: ProgramManifest;
  /** The safetensors tensors of the program, zero-copy views of mapped files. */
  readonly namedData: SafetensorsNamedDataMap;
  /** Reads a file the manifest names (relative to it), e.g. a ChipCallable. */
  readFile(relativePath: string, field: string): Uint8Array;
  /** Unmaps the weights. */
  close(): void;
}

/** Loads a manifest and maps its weights; on any error nothing stays open. */
export function loadProgram(path: string, verification: ProgramVerification): LoadedProgram {
  const manifest = parseManifest(readText(path), path);
  const dir = dirname(path);
  const files: SafetensorsFile[] = [];
  try {
    manifest.weights.forEach((weights, index) => {
      files.push(SafetensorsFile.open(resolveInside(dir, weights, path, `weights[${index}]`)));
    });
    const namedData = new SafetensorsNamedDataMap(files);
    if (verification === 'internal-consistency') checkReferences(manifest, namedData, path);
    return {
      path,
      manifest,
      namedData,
      readFile: (relativePath, field) =>
        readBytes(resolveInside(dir, relativePath, path, field), path, field),
      close: () => namedData.close(),
    };
  } catch (error) {
    for (const file of files) file.close();
    throw error;
  }
}

function checkReferences(
  manifest: ProgramManifest,
  namedData: SafetensorsNamedDataMap,
  path: string,
): void {
  for (const [name, method] of manifest.methods) {
    if (method.kind !== 'graph') continue;
    method.graph.forEach((node, index) => {
      if (node.op !== 'linear') return;
      for (const [role, tensor] of [
        ['weight', node.weight],
        ['bias', node.bias],
      ] as const) {
        if (tensor !== undefined && namedData.get(tensor) === undefined) {
          const field = `methods.${name}.graph[${index}].${role}`;
          throw new ModuleLoaderError(
            'ERR_MANIFEST_INVALID',
            `${path}: ${field}: no f32 tensor "${tensor}" in the weights`,
            {
              file: path,
              field,
            },
          );
        }
      }
    });
  }
}

/** A manifest may only name files in its own folder tree. */
function resolveInside(
  dir: string,
  relativePath: string,
  manifestPath: string,
  field: string,
): string {
  const normalized = normalize(relativePath);
  if (isAbsolute(relativePath) || normalized === '..' || normalized.startsWith(`..${sep}`)) {
    throw new ModuleLoaderError(
      'ERR_MANIFEST_INVALID',
      `${manifestPath}: ${field}: "${relativePath}" must be a path inside the program's folder`,
      { file: manifestPath, field },
    );
  }
  return join(dir, normalized);
}

function readText(path: string): string {
  return Buffer.from(readBytes(path, path, '$')).toString('utf8');
}

function readBytes(path: string, manifestPath: string, field: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
    throw new ModuleLoaderError('ERR_PROGRAM_IO', `${path}: cannot read (${code})`, {
      file: path === manifestPath ? path : manifestPath,
      field,
      cause: error,
    });
  }
}

// A plain summary of an ExecuTorch program: what `memlayer inspect` prints.

import { createDefaultRegistry } from '../backends/default-registry.js';
import type { BackendRegistry } from '../backends/registry.js';
import { ModuleLoaderError } from '../errors.js';
import { checkPteMethod } from '../module/pte-method.js';
import { sha256Hex } from '../safetensors/digest.js';
import { programInvalid } from './pte-errors.js';
import type { PteProgram } from './pte-program.js';
import { readXnnGraph, XNN_INVALID_ID, XNODE_FULLY_CONNECTED, xnodeName } from './xnn-graph.js';

export interface PteConstantSummary {
  /** The named key (lower-case hex SHA-256 of the bytes), or "offset N" for an unnamed one. */
  readonly key: string;
  readonly role: 'weight' | 'bias';
  readonly node: number;
  readonly dims: readonly number[];
}

export interface PteDelegateSummary {
  readonly index: number;
  readonly backend: string;
  readonly payloadBytes: number;
  /** XNNPACK delegates: node count by schema name. */
  readonly nodes: Readonly<Record<string, number>>;
  readonly constants: readonly PteConstantSummary[];
}

export interface PteMethodSummary {
  readonly name: string;
  readonly inputs: readonly (readonly number[] | null)[];
  readonly outputs: readonly (readonly number[] | null)[];
  readonly instructions: number;
  readonly delegates: readonly PteDelegateSummary[];
  /** What keeps the method from running here (empty: it runs). */
  readonly unsupported: readonly string[];
}

/** Every method of `program`: its delegates, nodes by type, constants and what cannot run. */
export function describePteProgram(
  program: PteProgram,
  registry: BackendRegistry = createDefaultRegistry(),
): PteMethodSummary[] {
  return program.methodNames().map((name) => {
    const method = program.method(name);
    if (method === undefined) return programInvalid(program.path, `method "${name}" vanished`);
    let problems: string[];
    try {
      ({ problems } = checkPteMethod(program, method, registry));
    } catch (error) {
      // A program described without its .ptd: say what it needs, describe the rest.
      if (!(error instanceof ModuleLoaderError) || error.code !== 'ERR_DATA_FILE_REQUIRED')
        throw error;
      problems = ['its constants are in a .ptd data file that was not given'];
    }
    const delegates = method.delegates.map((delegate, index): PteDelegateSummary => {
      const summary = { index, backend: delegate.id, payloadBytes: delegate.payload.byteLength };
      if (delegate.id !== 'XnnpackBackend') return { ...summary, nodes: {}, constants: [] };
      const graph = readXnnGraph(delegate.payload, (what) =>
        programInvalid(program.path, `method "${name}", delegate ${index}: ${what}`),
      );
      const nodes: Record<string, number> = {};
      const constants: PteConstantSummary[] = [];
      for (let n = 0; n < graph.nodeCount; n++) {
        const type = graph.nodeType[n] as number;
        nodes[xnodeName(type)] = (nodes[xnodeName(type)] ?? 0) + 1;
        if (type !== XNODE_FULLY_CONNECTED) continue;
        for (const [role, value] of [
          ['weight', graph.nodeFilter[n]],
          ['bias', graph.nodeBias[n]],
        ] as const) {
          if (value === undefined || value === XNN_INVALID_ID) continue;
          const index = graph.constantIndex[value] as number;
          if (index === 0) continue;
          const dims = [...graph.dims.subarray(graph.dimStart[value], graph.dimStart[value + 1])];
          const key =
            graph.constantKey(index) ?? `offset-stored ${sha256Hex(graph.constantBytes(index))}`;
          constants.push({ key, role, node: n, dims });
        }
      }
      return { ...summary, nodes, constants };
    });
    return {
      name,
      inputs: method.inputs.map((value) => method.tensor(value)?.sizes ?? null),
      outputs: method.outputs.map((value) => method.tensor(value)?.sizes ?? null),
      instructions: method.instructions.length,
      delegates,
      unsupported: problems,
    };
  });
}

export interface ConstantCheck {
  readonly key: string;
  readonly file: string;
  readonly bytes: number;
  /** Whether the bytes hash to the key. */
  readonly ok: boolean;
}

/**
 * Re-hashes every named constant of the program and its data files (a warm start trusts
 * the keys, as ExecuTorch does; this is the check on demand).
 */
export function verifyPteConstants(program: PteProgram): ConstantCheck[] {
  return [...program.namedData()].map(([key, { file, size }]) => ({
    key,
    file,
    bytes: size,
    ok: sha256Hex(program.namedBytes(key, '')) === key,
  }));
}

import { basename, dirname, join } from 'node:path';
import { ModuleLoaderError } from '../../errors.js';
import { nodeFs } from '../../files/node-fs.js';
import { loadProgram } from '../../program/program.js';
import type { ExportedProgram, ExportProgramOptions } from './export-program.js';
import { type FilePieces, writeFilePieces } from './file-pieces.js';
import { EXPORT_BATCH, type LoweredGraphMethod, lowerGraphMethod } from './lower-graph-method.js';
import { planTensors } from './planned-memory.js';
import { ptdFile } from './ptd.js';
import { pteFile } from './pte.js';
import {
  type ExecutionPlanDescription,
  FIRST_PLANNED_MEMORY_ID,
  type NamedDataEntry,
  SCALAR_TYPE_FLOAT,
} from './pte-description.js';
import { encodeXnnPayload } from './xnn-payload.js';

/** The backend id every exported method is delegated to (backends/xnnpack XnnpackBackend). */
const XNNPACK_BACKEND_ID = 'XnnpackBackend';
/** Bytes of one f32 element. */
const F32_BYTES = 4;

/**
 * exportProgram's work, loaded by its first call (the .pte and .ptd writers and the
 * flatbuffers runtime are not needed to read programs). Arguments are checked already.
 */
export async function writeProgramFiles(
  manifestPath: string,
  where: 'ptd' | 'pte',
  options: ExportProgramOptions,
): Promise<ExportedProgram> {
  const program = loadProgram(manifestPath, 'internal-consistency');
  let pteBytes: FilePieces;
  let ptdBytes: FilePieces | null;
  let constantCount: number;
  const methods: string[] = [];
  const skipped: ExportedProgram['skipped'] = [];
  try {
    const plans: ExecutionPlanDescription[] = [];
    const constants: NamedDataEntry[] = [];
    for (const [name, method] of program.manifest.methods) {
      if (method.kind !== 'graph' || method.backend !== XNNPACK_BACKEND_ID) {
        skipped.push({ method: name, backend: method.backend });
        continue;
      }
      const lowered = lowerGraphMethod(method, {
        file: manifestPath,
        method: name,
        tensor: (tensorName) => program.namedData.get(tensorName),
      });
      plans.push(executionPlan(name, lowered));
      constants.push(...lowered.constants);
      methods.push(name);
    }
    if (plans.length === 0) {
      throw new ModuleLoaderError(
        'ERR_MANIFEST_INVALID',
        `${manifestPath}: no method exports to a .pte: only ${XNNPACK_BACKEND_ID} graph methods do (${skipped.map((m) => `${m.method} runs on ${m.backend}`).join(', ')})`,
        { file: manifestPath, field: 'methods' },
      );
    }
    // Keys are content digests: one key per distinct constant.
    constantCount = new Set(constants.map((constant) => constant.key)).size;
    const inPtd = where === 'ptd' && constantCount > 0;
    pteBytes = pteFile({ plans, namedData: inPtd ? [] : constants });
    ptdBytes = inPtd ? ptdFile(constants) : null;
  } finally {
    program.close();
  }
  const outDir = options.outDir ?? dirname(manifestPath);
  const name = basename(manifestPath).replace(/\.json$/i, '');
  // fs.promises when first written: its module facade costs ~0.8 ms of every import.
  await nodeFs().promises.mkdir(outDir, { recursive: true });
  const ptePath = join(outDir, `${name}.pte`);
  const ptdPath = ptdBytes === null ? null : join(outDir, `${name}.ptd`);
  await writeFilePieces(ptePath, pteBytes);
  if (ptdPath !== null) await writeFilePieces(ptdPath, ptdBytes as FilePieces);
  return { pte: ptePath, ptd: ptdPath, methods, skipped, constants: constantCount };
}

/**
 * The method's plan: one tensor value per input and output ([1, features] f32, contiguous,
 * memory-planned in buffer 1), and a chain of one DelegateCall whose args are the inputs
 * then the outputs (runtime/executor/method.cpp hands them to the backend in that order;
 * backends/xnnpack/runtime/XNNExecutor.cpp reads args[external_id]).
 */
function executionPlan(name: string, lowered: LoweredGraphMethod): ExecutionPlanDescription {
  const external = lowered.externalFeatures;
  const inputCount = lowered.inputCount;
  const { offsets, total } = planTensors(external.map((features) => features * F32_BYTES));
  const values = external.map((features, index) => ({
    kind: 'tensor' as const,
    // schema/scalar_type.fbs FLOAT; dim_order [0, 1] is contiguous (runtime checks it).
    scalarType: SCALAR_TYPE_FLOAT,
    sizes: [EXPORT_BATCH, features],
    dimOrder: [0, 1],
    allocation: { memoryId: FIRST_PLANNED_MEMORY_ID, offset: offsets[index] as number },
  }));
  const args = external.map((_, index) => index);
  return {
    name,
    values,
    inputs: args.slice(0, inputCount),
    outputs: args.slice(inputCount),
    instructions: [{ kind: 'delegateCall', delegateIndex: 0, args }],
    operators: [],
    delegates: [{ id: XNNPACK_BACKEND_ID, payload: encodeXnnPayload(lowered.graph) }],
    // exir/memory_planning.py: buffer 0 is reserved for constants, its size unused (0).
    nonConstBufferSizes: [0, total],
  };
}

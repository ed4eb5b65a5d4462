import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CliError, EXIT_OK, EXIT_USAGE, usageError } from '../cli-error.js';
import { boolFlag, type Command, stringFlag } from '../command.js';
import { formatBytes, formatMs, hex32, renderTable } from '../format.js';
import type { RunReport } from '../run-program.js';
import { requirePath } from './inspect.js';

function positiveInteger(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw usageError(`Expected a positive integer for ${flag} but received "${text}"`);
  return value;
}

/** --max-mib: a disk budget in MiB (0: none), as packed_cache_max_mib takes it. */
function budgetMib(text: string | undefined): number {
  if (text === undefined) return 0;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value > 2 ** 31 - 1)
    throw usageError(`Expected a whole number of MiB for --max-mib but received "${text}"`);
  return value;
}

/** --input: a JSON array of numbers (one input) or an array of such arrays. */
function readInputs(path: string): Float32Array[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new CliError(`${path}: cannot read input (${(error as Error).message})`, {
      exitCode: EXIT_USAGE,
    });
  }
  const lists = Array.isArray(json) && json.every(Array.isArray) ? json : [json];
  return lists.map((list, index) => {
    if (!Array.isArray(list) || !list.every((value) => typeof value === 'number')) {
      throw new CliError(`${path}: input ${index} must be an array of numbers`, {
        exitCode: EXIT_USAGE,
      });
    }
    return Float32Array.from(list as number[]);
  });
}

export const runCommand: Command = {
  name: 'run',
  summary:
    'load a program through the module loader and run a method; timings, packs, cache hits, memory',
  args: '<program.json | model.pte>',
  options: {
    data: {
      type: 'string',
      value: '<model.ptd>',
      description:
        'the .ptd file holding the constants of a .pte program (repeat for several: a,b)',
    },
    cache: {
      type: 'string',
      value: '<file>',
      description: 'file-backed packed-weights cache (created if absent); heap-only without',
    },
    method: {
      type: 'string',
      value: '<name>',
      description: "method to run (default: the program's first)",
    },
    batch: {
      type: 'string',
      value: '<n>',
      description: 'rows of deterministic input when no --input is given (default 1)',
    },
    input: {
      type: 'string',
      value: '<file.json>',
      description: 'inputs: a JSON array of numbers, or an array of such arrays (one per input)',
    },
    repeat: {
      type: 'string',
      value: '<n>',
      description: 'execute the method n times and report the mean time (default 1)',
    },
    'max-mib': {
      type: 'string',
      value: '<n>',
      description:
        'disk budget of the cache file in MiB: entries past it stay on the heap, and at unload least recently used entries are evicted (default: none)',
    },
    'cache-format': {
      type: 'string',
      value: '<2|3>',
      description:
        'format of a new cache file: 3 (default) or 2, the one ExecuTorch reads and writes',
    },
    'cpu-features': {
      type: 'string',
      value: '<spec>',
      description:
        'the CPU to tile layers for, as XNNPACK would pick kernels on it: "x64:sse2,avx,fma3[,avx512f][,zen]", "arm64[:cortex-x4|oryon|exynos-m1|exynos-m2]" or "none" (nr8kr1sr1); default: this CPU',
    },
    threads: {
      type: 'string',
      value: '<n>',
      description:
        'threads each layer may share, this one included (1-256, default 1): the native kernels split large layers',
    },
    json: { type: 'boolean', description: 'print the report as one JSON document' },
  },
  async run(context) {
    const [{ ModuleLoaderError }, { runProgram }, { parseCpuFeatures, WeightsCacheError }] =
      await Promise.all([
        import('@memlayer/module-loader'),
        import('../run-program.js'),
        import('@memlayer/xnnpack-cache'),
      ]);
    const programPath = requirePath(context.positionals, 'a program.json or model.pte');
    const data = stringFlag(context, 'data');
    const input = stringFlag(context, 'input');
    const method = stringFlag(context, 'method');
    const cachePath = stringFlag(context, 'cache');
    const cacheFormat = stringFlag(context, 'cache-format');
    if (cacheFormat !== undefined && cacheFormat !== '2' && cacheFormat !== '3')
      throw usageError(`Expected 2 or 3 for --cache-format but received "${cacheFormat}"`);
    const cpuSpec = stringFlag(context, 'cpu-features');
    let cpuFeatures: ReturnType<typeof parseCpuFeatures> | undefined;
    try {
      cpuFeatures = cpuSpec === undefined ? undefined : parseCpuFeatures(cpuSpec);
    } catch (error) {
      if (!(error instanceof WeightsCacheError)) throw error;
      throw usageError(`--cpu-features: ${error.message}`);
    }
    let report: RunReport;
    try {
      report = runProgram({
        programPath: resolve(context.cwd, programPath),
        dataFiles:
          data === undefined ? [] : data.split(',').map((file) => resolve(context.cwd, file)),
        // An empty --cache means heap-only, as an empty packed_cache_path does.
        cachePath:
          cachePath === undefined || cachePath === '' ? '' : resolve(context.cwd, cachePath),
        progress: context.progress,
        ...(method === undefined ? {} : { method }),
        batch: positiveInteger(stringFlag(context, 'batch'), '--batch', 1),
        ...(input === undefined ? {} : { inputs: readInputs(resolve(context.cwd, input)) }),
        repeat: positiveInteger(stringFlag(context, 'repeat'), '--repeat', 1),
        threads: positiveInteger(stringFlag(context, 'threads'), '--threads', 1),
        maxMib: budgetMib(stringFlag(context, 'max-mib')),
        ...(cacheFormat === undefined ? {} : { cacheFormat: Number(cacheFormat) as 2 | 3 }),
        ...(cpuFeatures === undefined ? {} : { cpuFeatures }),
      });
    } catch (error) {
      if (!(error instanceof ModuleLoaderError)) throw error;
      const where = [error.file, error.field].filter(Boolean).join(' ');
      throw new CliError(`${where ? `${where}: ` : ''}${error.code}: ${error.message}`, {
        exitCode: [
          'ERR_MANIFEST_INVALID',
          'ERR_SAFETENSORS_INVALID',
          'ERR_PROGRAM_IO',
          'ERR_INVALID_INPUT',
          'ERR_METHOD_NOT_FOUND',
          'ERR_PROGRAM_INVALID',
          'ERR_PROGRAM_UNSUPPORTED',
          'ERR_DATA_FILE_REQUIRED',
          'ERR_NAMED_DATA_MISSING',
        ].includes(error.code)
          ? EXIT_USAGE
          : 1,
        hint: 'fix the program files (see the module-loader README for the format)',
        cause: error,
      });
    }
    if (boolFlag(context, 'json')) {
      context.stdout(`${JSON.stringify(report, null, 2)}\n`);
      return EXIT_OK;
    }
    const rows: string[][] = [
      ['load (manifest + map weights)', formatMs(report.timings.loadMs)],
      ['init (pack or map packed weights)', formatMs(report.timings.initMs)],
      ['execute (per run)', formatMs(report.timings.executeMs)],
      ['unload', formatMs(report.timings.unloadMs)],
      ['operators', String(report.operators)],
      ['packing calls', String(report.packs)],
      ['cache hits', String(report.cacheHits)],
      ['tiled for CPU', `${report.cpu.features} (${report.cpu.source})`],
    ];
    if (report.cache) {
      rows.push(
        ['packed bytes', formatBytes(report.cache.packedBytes)],
        ['cache file', formatBytes(report.cache.fileBytes)],
        ['orphan bytes', formatBytes(report.cache.orphanBytes)],
        [
          'dirty / clean (mapped)',
          report.cache.memoryMeasured
            ? `${formatBytes(report.cache.dirtyBytes)} / ${formatBytes(report.cache.cleanBytes)}`
            : 'not measured here',
        ],
        ['packed bytes on the heap', formatBytes(report.cache.heapBytes)],
      );
      const { maxFileBytes, evicted } = report.cache;
      if (maxFileBytes !== null) {
        rows.push(
          [
            'file budget (used / budget)',
            `${formatBytes(report.cache.fileBytes)} / ${formatBytes(maxFileBytes)}`,
          ],
          ['evicted at unload', `${evicted.entries} entries, ${formatBytes(evicted.bytes)}`],
        );
      }
    }
    if (report.device)
      rows.push(['device bytes uploaded', formatBytes(report.device.bytesUploaded)]);
    const outputs = report.outputs.map(
      (output, index) =>
        `output ${index}: [${output.shape.join(', ')}] crc32c ${hex32(output.crc32c)} first ${output.first.map((v) => v.toFixed(5)).join(' ')}`,
    );
    context.stdout(
      `${report.program} · ${report.method} (${report.backend})${report.cachePath ? ` · cache ${report.cachePath}` : ' · heap-only cache'}\n${renderTable(['step', 'value'], rows, context.columns)}\n${outputs.join('\n')}\n`,
    );
    return EXIT_OK;
  },
};

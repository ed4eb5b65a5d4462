import { elfBuildId64 } from './build-id.js';
import {
  DEFAULT_ORCH_CONFIG_SYMBOL,
  DEFAULT_ORCH_ENTRY_SYMBOL,
  HOST_ORCH_REQUIRED_SYMBOLS,
} from './constants.js';
import {
  parseSharedObject,
  type SharedObjectInfo,
  STB_WEAK,
  STT_FUNC,
  STT_GNU_IFUNC,
} from './elf.js';
import { DeviceRunnerError } from './errors.js';

/** What loading an orchestration .so yields (the AICPU's dlopen + dlsym, or the host's). */
export interface LoadedOrchestration {
  readonly entrySymbol: string;
  /** st_value of the entry symbol (offset from the load base). */
  readonly entryAddress: bigint;
  /** The config symbol looked up: config_name, or aicpu_orchestration_config when empty. */
  readonly configSymbol: string | null;
  /** null when the object does not define it (the config function is optional). */
  readonly configAddress: bigint | null;
  readonly buildId64: bigint;
}

export interface LoadOrchestrationOptions {
  /**
   * 'device' (default): the AICPU's load (dlopen RTLD_LAZY). 'host': host_build_graph's load
   * (dlopen RTLD_NOW), which needs a non-empty func_name, resolves every import and requires
   * framework_bind_runtime and framework_prewarm_graph_recorders.
   */
  readonly mode?: 'device' | 'host';
  /** Host mode: the symbols the host process provides to the object's imports. */
  readonly hostSymbols?: Iterable<string>;
}

/**
 * Checks `orch` is a loadable ELF64 shared object and resolves its entry symbol and the
 * optional config symbol the way the chosen loader does.
 */
export function loadOrchestration(
  orch: Uint8Array,
  funcName: string,
  configName: string,
  options: LoadOrchestrationOptions = {},
): LoadedOrchestration {
  const host = options.mode === 'host';
  // host_build_graph refuses an empty name (runtime_maker.cpp register_callable_impl); the
  // AICPU substitutes the default (aicpu_executor.cpp load_orch_so).
  if (host && funcName === '') {
    throw new DeviceRunnerError(
      'ERR_ORCH_ENTRY_NAME_EMPTY',
      'host orchestration needs a func_name: the host does not default the entry symbol',
    );
  }
  const object = parseSharedObject(orch);
  if (host) checkImportsResolve(object, new Set(options.hostSymbols ?? []));
  const entrySymbol = funcName === '' ? DEFAULT_ORCH_ENTRY_SYMBOL : funcName;
  const entry = object.lookup(entrySymbol);
  if (!entry || (entry.type !== STT_FUNC && entry.type !== STT_GNU_IFUNC)) {
    throw new DeviceRunnerError(
      'ERR_ELF_SYMBOL_NOT_FOUND',
      `the orchestration object defines no function ${JSON.stringify(entrySymbol)}`,
    );
  }
  if (host) {
    for (const required of HOST_ORCH_REQUIRED_SYMBOLS) {
      if (!object.lookup(required)) {
        throw new DeviceRunnerError(
          'ERR_ELF_SYMBOL_NOT_FOUND',
          `a host orchestration object must export ${required}`,
        );
      }
    }
  }
  // The AICPU looks up config_name or aicpu_orchestration_config; a miss leaves it null.
  const configSymbol = configName === '' ? DEFAULT_ORCH_CONFIG_SYMBOL : configName;
  const config = object.lookup(configSymbol);
  return {
    entrySymbol,
    entryAddress: entry.value,
    configSymbol,
    configAddress: config ? config.value : null,
    buildId64: elfBuildId64(orch),
  };
}

/** RTLD_NOW: every undefined non-weak dynamic symbol must be provided by the host. */
function checkImportsResolve(object: SharedObjectInfo, provided: ReadonlySet<string>): void {
  for (const symbol of object.symbols) {
    if (symbol.name === '' || symbol.sectionIndex !== 0 || symbol.binding === STB_WEAK) continue;
    if (symbol.binding === 0) continue; // a local undefined symbol is not an import
    if (!provided.has(symbol.name)) {
      throw new DeviceRunnerError(
        'ERR_ELF_UNRESOLVED_SYMBOL',
        `the host cannot resolve the import ${JSON.stringify(symbol.name)} (dlopen RTLD_NOW)`,
      );
    }
  }
}

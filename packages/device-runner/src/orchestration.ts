import { DEFAULT_ORCH_ENTRY_SYMBOL } from './constants.js';
import { elfBuildId64, parseSharedObject, STT_FUNC, STT_GNU_IFUNC } from './elf.js';
import { DeviceRunnerError } from './errors.js';

/** What loading an orchestration .so yields (the AICPU's dlopen + dlsym, or the host's). */
export interface LoadedOrchestration {
  readonly entrySymbol: string;
  /** st_value of the entry symbol (offset from the load base). */
  readonly entryAddress: bigint;
  readonly configSymbol: string | null;
  /** null when no config name was given or the object does not define it (optional). */
  readonly configAddress: bigint | null;
  readonly buildId64: bigint;
}

/**
 * Checks `orch` is a loadable ELF64 shared object and resolves its entry symbol
 * (func_name, or aicpu_orchestration_entry when empty) and the optional config symbol.
 */
export function loadOrchestration(
  orch: Uint8Array,
  funcName: string,
  configName: string,
): LoadedOrchestration {
  const object = parseSharedObject(orch);
  const entrySymbol = funcName === '' ? DEFAULT_ORCH_ENTRY_SYMBOL : funcName;
  const entry = object.lookup(entrySymbol);
  if (!entry || (entry.type !== STT_FUNC && entry.type !== STT_GNU_IFUNC)) {
    throw new DeviceRunnerError(
      'ERR_ELF_SYMBOL_NOT_FOUND',
      `the orchestration object defines no function ${JSON.stringify(entrySymbol)}`,
    );
  }
  // The config symbol is optional upstream: looked up, used only when present.
  const config = configName === '' ? undefined : object.lookup(configName);
  return {
    entrySymbol,
    entryAddress: entry.value,
    configSymbol: configName === '' ? null : configName,
    configAddress: config ? config.value : null,
    buildId64: elfBuildId64(orch),
  };
}

import { describeValue, ModuleLoaderError } from '../errors.js';
import { type BackendOption, type OptionValue, optionTypeOf } from '../options/backend-option.js';

/** XNNPACK backend option keys (ExecuTorch backends/xnnpack runtime). */
export const XNNPACK_OPTION_KEYS = {
  weightCacheEnabled: 'weight_cache_enabled',
  workspaceSharingMode: 'workspace_sharing_mode',
  packedCachePath: 'packed_cache_path',
  saveWeightCacheOnDisk: 'save_weight_cache_on_disk',
  /** Ours: which XNNPACK revision's operator types seed the cache ('' = the cache's default). */
  xnnpackRevision: 'xnnpack_revision',
  /** Ours: disk budget of the packed cache file in MiB (0 = none, the manager's default). */
  packedCacheMaxMib: 'packed_cache_max_mib',
} as const;

/** XNNPACK revisions whose seeds the cache can compute (ExecuTorch main pins 92a7ad50). */
export const XNNPACK_REVISION_VALUES = ['92a7ad50', '1adaa7c7'] as const;

/** XNNPACK's WorkspaceSharingMode: 0 Disabled, 1 PerModel, 2 Global. */
export const WORKSPACE_SHARING_MODES = ['Disabled', 'PerModel', 'Global'] as const;

export interface XnnpackRuntimeOptions {
  weightCacheEnabled: boolean;
  workspaceSharingMode: number;
  /** Empty: the shared heap-only cache instance. */
  packedCachePath: string;
  /** A one-shot request of one init's runtime specs; never kept as a global option. */
  saveWeightCacheOnDisk: boolean;
  /** '' = the cache's default revision. */
  xnnpackRevision: string;
  /** Disk budget of the cache file in MiB; 0 = none asked (the cache manager's). */
  packedCacheMaxMib: number;
}

/**
 * Upstream's defaults in the builds ExecuTorch's CMake presets make (weight cache on,
 * EXECUTORCH_XNNPACK_SHARED_WORKSPACE on ⇒ WorkspaceSharingMode::Global).
 */
export const DEFAULT_XNNPACK_OPTIONS: Readonly<XnnpackRuntimeOptions> = Object.freeze({
  weightCacheEnabled: true,
  workspaceSharingMode: 2,
  packedCachePath: '',
  saveWeightCacheOnDisk: false,
  xnnpackRevision: '',
  packedCacheMaxMib: 0,
});

const EXPECTED_TYPES: Record<string, 'boolean' | 'int' | 'string'> = {
  [XNNPACK_OPTION_KEYS.weightCacheEnabled]: 'boolean',
  [XNNPACK_OPTION_KEYS.workspaceSharingMode]: 'int',
  [XNNPACK_OPTION_KEYS.packedCachePath]: 'string',
  [XNNPACK_OPTION_KEYS.saveWeightCacheOnDisk]: 'boolean',
  [XNNPACK_OPTION_KEYS.xnnpackRevision]: 'string',
  [XNNPACK_OPTION_KEYS.packedCacheMaxMib]: 'int',
};

/** Checks a known key's type (and range); returns false for keys this backend ignores. */
export function checkXnnpackOption(key: string, value: OptionValue): boolean {
  const expected = EXPECTED_TYPES[key];
  if (expected === undefined) return false;
  if (optionTypeOf(value) !== expected) {
    throw new ModuleLoaderError(
      'ERR_OPTION_WRONG_TYPE',
      `Expected a ${expected} for XnnpackBackend option "${key}" but received ${describeValue(value)}`,
      { field: key },
    );
  }
  const mode = value as number;
  if (
    key === XNNPACK_OPTION_KEYS.workspaceSharingMode &&
    (mode < 0 || mode >= WORKSPACE_SHARING_MODES.length)
  ) {
    throw new ModuleLoaderError(
      'ERR_OPTION_INVALID_VALUE',
      `Expected 0 (Disabled), 1 (PerModel) or 2 (Global) for "${key}" but received ${describeValue(value)}`,
      { field: key },
    );
  }
  if (key === XNNPACK_OPTION_KEYS.packedCacheMaxMib && mode < 0) {
    throw new ModuleLoaderError(
      'ERR_OPTION_INVALID_VALUE',
      `Expected a budget in MiB of at least 0 (0: none) for "${key}" but received ${describeValue(value)}`,
      { field: key },
    );
  }
  if (
    key === XNNPACK_OPTION_KEYS.xnnpackRevision &&
    !(XNNPACK_REVISION_VALUES as readonly string[]).includes(value as string)
  ) {
    throw new ModuleLoaderError(
      'ERR_OPTION_INVALID_VALUE',
      `Expected one of ${XNNPACK_REVISION_VALUES.join(', ')} for "${key}" but received ${describeValue(value)}`,
      { field: key },
    );
  }
  return true;
}

/** Resolves runtime specs over `defaults`; unknown keys are ignored, as upstream. */
export function resolveXnnpackOptions(
  runtimeSpecs: readonly BackendOption[],
  defaults: Readonly<XnnpackRuntimeOptions>,
): XnnpackRuntimeOptions {
  const resolved = { ...defaults };
  for (const { key, value } of runtimeSpecs) {
    if (!checkXnnpackOption(key, value)) continue;
    if (key === XNNPACK_OPTION_KEYS.weightCacheEnabled)
      resolved.weightCacheEnabled = value as boolean;
    else if (key === XNNPACK_OPTION_KEYS.workspaceSharingMode)
      resolved.workspaceSharingMode = value as number;
    else if (key === XNNPACK_OPTION_KEYS.packedCachePath)
      resolved.packedCachePath = value as string;
    else if (key === XNNPACK_OPTION_KEYS.xnnpackRevision)
      resolved.xnnpackRevision = value as string;
    else if (key === XNNPACK_OPTION_KEYS.packedCacheMaxMib)
      resolved.packedCacheMaxMib = value as number;
    else resolved.saveWeightCacheOnDisk = value as boolean;
  }
  return resolved;
}

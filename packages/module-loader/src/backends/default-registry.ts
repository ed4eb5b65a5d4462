import { ASCEND_SIM_BACKEND_ID, AscendSimBackend } from './ascend-sim-backend.js';
import { BackendRegistry } from './registry.js';
import {
  XNNPACK_BACKEND_ID,
  XnnpackBackend,
  type XnnpackBackendConfig,
} from './xnnpack-backend.js';

export interface DefaultBackendsConfig {
  /** Without `caches`, the XNNPACK backend gets its own XNNWeightsCacheManager (per path). */
  xnnpack?: XnnpackBackendConfig;
  ascend?: ConstructorParameters<typeof AscendSimBackend>[0];
}

/**
 * A registry with XnnpackBackend and AscendSimBackend, each created when a method first
 * uses it (the simulator's device memory is allocated only then).
 */
export function createDefaultRegistry(config: DefaultBackendsConfig = {}): BackendRegistry {
  return new BackendRegistry()
    .registerLazy(XNNPACK_BACKEND_ID, () => new XnnpackBackend(config.xnnpack))
    .registerLazy(ASCEND_SIM_BACKEND_ID, () => new AscendSimBackend(config.ascend));
}

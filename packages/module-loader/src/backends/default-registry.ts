import { AscendSimBackend } from './ascend-sim-backend.js';
import { BackendRegistry } from './registry.js';
import { XnnpackBackend, type XnnpackBackendConfig } from './xnnpack-backend.js';

export interface DefaultBackendsConfig {
  xnnpack?: XnnpackBackendConfig;
  ascend?: ConstructorParameters<typeof AscendSimBackend>[0];
}

/** A registry with XnnpackBackend and AscendSimBackend. */
export function createDefaultRegistry(config: DefaultBackendsConfig = {}): BackendRegistry {
  return new BackendRegistry()
    .register(new XnnpackBackend(config.xnnpack))
    .register(new AscendSimBackend(config.ascend));
}

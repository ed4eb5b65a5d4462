import { getBackend } from './select-backend.js';

/** The system page size (mapping and msync granularity) of the default backend. */
export function pageSize(): number {
  return getBackend().pageSize();
}

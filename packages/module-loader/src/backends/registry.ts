import { ModuleLoaderError } from '../errors.js';
import type { Backend } from './backend.js';

/** Backends by id; a Module looks each method's backend up here. */
export class BackendRegistry {
  private readonly backends = new Map<string, Backend>();

  register(backend: Backend): this {
    if (this.backends.has(backend.id)) {
      throw new ModuleLoaderError(
        'ERR_BACKEND_ID_INVALID',
        `Backend "${backend.id}" is already registered`,
        {
          field: backend.id,
        },
      );
    }
    this.backends.set(backend.id, backend);
    return this;
  }

  get(id: string): Backend {
    const backend = this.backends.get(id);
    if (!backend) {
      throw new ModuleLoaderError(
        'ERR_BACKEND_NOT_REGISTERED',
        `No backend "${id}" is registered (registered: ${[...this.backends.keys()].join(', ') || 'none'})`,
        { field: id },
      );
    }
    return backend;
  }

  has(id: string): boolean {
    return this.backends.has(id);
  }

  ids(): string[] {
    return [...this.backends.keys()];
  }
}

import { ModuleLoaderError } from '../errors.js';
import type { Backend } from './backend.js';

/** Backends by id; a Module looks each method's backend up here. */
export class BackendRegistry {
  private readonly backends = new Map<string, Backend>();
  private readonly factories = new Map<string, () => Backend>();

  register(backend: Backend): this {
    this.assertFree(backend.id);
    this.backends.set(backend.id, backend);
    return this;
  }

  /**
   * Registers a backend created on first get(id): what a backend allocates up front (the
   * Ascend simulator's device memory) is spent only when a method uses it.
   */
  registerLazy(id: string, create: () => Backend): this {
    this.assertFree(id);
    this.factories.set(id, create);
    return this;
  }

  get(id: string): Backend {
    let backend = this.backends.get(id);
    if (!backend) {
      const create = this.factories.get(id);
      if (create) {
        backend = create();
        if (backend.id !== id) {
          throw new ModuleLoaderError(
            'ERR_BACKEND_ID_INVALID',
            `Backend registered as "${id}" was created with id "${backend.id}"`,
            { field: id },
          );
        }
        this.factories.delete(id);
        this.backends.set(id, backend);
      }
    }
    if (!backend) {
      throw new ModuleLoaderError(
        'ERR_BACKEND_NOT_REGISTERED',
        `No backend "${id}" is registered (registered: ${this.ids().join(', ') || 'none'})`,
        { field: id },
      );
    }
    return backend;
  }

  has(id: string): boolean {
    return this.backends.has(id) || this.factories.has(id);
  }

  /** Whether the backend exists already (a lazy one is created by its first get). */
  isCreated(id: string): boolean {
    return this.backends.has(id);
  }

  ids(): string[] {
    return [...this.backends.keys(), ...this.factories.keys()];
  }

  private assertFree(id: string): void {
    if (this.has(id)) {
      throw new ModuleLoaderError(
        'ERR_BACKEND_ID_INVALID',
        `Backend "${id}" is already registered`,
        {
          field: id,
        },
      );
    }
  }
}

import { ModuleLoaderError } from '../errors.js';

/** A .pte, .ptd or delegate payload that breaks its format. */
export function programInvalid(file: string, what: string): never {
  throw new ModuleLoaderError('ERR_PROGRAM_INVALID', `${file}: ${what}`, { file });
}

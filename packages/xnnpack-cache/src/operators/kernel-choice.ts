// Which kernel runs a fully-connected operator: the addon's native GEMM kernels (read the
// packed weights in place, SIMD, optional threads) or this package's JavaScript kernel,
// the fallback wherever the addon is missing and the reference the native one is tested
// against.
import { type GemmKernels, loadGemmKernels } from '@memlayer/mmap-native';
import { invalidArgument, WeightsCacheError } from '../errors.js';

/** 'auto' (default): native when the addon loads, JavaScript otherwise. */
export type KernelChoice = 'auto' | 'native' | 'javascript';

const CHOICES: readonly KernelChoice[] = ['auto', 'native', 'javascript'];
/** The addon's limit (@memlayer/mmap-native gemmF32). */
const MAX_THREADS = 256;

/** How an operator runs, checked at creation. */
export interface OperatorExecution {
  /** The native kernels, or null: the JavaScript kernel runs. */
  readonly native: GemmKernels | null;
  /** Threads a native run may use (the JavaScript kernel runs on the calling thread). */
  readonly threads: number;
}

/**
 * Checks the `kernels` and `threads` options and finds the kernels. `load` is the addon's
 * loader (a parameter so tests can stand for a machine without the addon).
 */
export function operatorExecution(
  kernels: KernelChoice | undefined,
  threads: number | undefined,
  load: () => GemmKernels | null = loadGemmKernels,
): OperatorExecution {
  const choice = kernels ?? 'auto';
  if (!CHOICES.includes(choice))
    invalidArgument("'auto', 'native' or 'javascript'", 'kernels', kernels);
  const count = threads ?? 1;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_THREADS) {
    invalidArgument(`an integer between 1 and ${MAX_THREADS}`, 'threads', threads);
  }
  if (choice === 'javascript') return { native: null, threads: count };
  if (choice === 'native') {
    const native = loadNative(load);
    if (native === null) {
      throw new WeightsCacheError(
        'ERR_CACHE_NATIVE_KERNELS_UNAVAILABLE',
        "kernels: 'native' needs the native addon of @memlayer/mmap-native, which is not " +
          "installed or built here; use kernels: 'auto' or 'javascript'",
      );
    }
    return { native, threads: count };
  }
  // 'auto': an addon that is there but does not load leaves the JavaScript kernel, which
  // runs wherever the cache does.
  try {
    return { native: load(), threads: count };
  } catch {
    return { native: null, threads: count };
  }
}

function loadNative(load: () => GemmKernels | null): GemmKernels | null {
  try {
    return load();
  } catch (error) {
    throw new WeightsCacheError(
      'ERR_CACHE_NATIVE_KERNELS_UNAVAILABLE',
      `kernels: 'native' needs the native addon of @memlayer/mmap-native, which did not load: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

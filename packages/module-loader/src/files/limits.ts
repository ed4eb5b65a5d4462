// Size caps of the files a program folder names, checked with fstat before any byte is read.
// The manifest cap is MAX_MANIFEST_BYTES in program/manifest.ts (16 MiB).

/**
 * 256 MiB: far above any real ChipCallable (at most 1024 kernels plus one orchestration
 * object), and small enough that a hostile or mistaken file cannot exhaust memory.
 */
export const MAX_CALLABLE_BYTES = 256 * 1024 * 1024;

/**
 * Span to map a large file in, window by window, without starting garbage collections.
 * V8 starts a full collection each time its external-memory count grows 64 MiB past its
 * low mark; this package keeps a mapping out of that count, which V8 allows only for
 * mappings under 64 MiB (it checks as it adds). 32 MiB leaves the other half of that step
 * to the process's own buffers.
 */
export const NO_GC_WINDOW_BYTES = 32 * 1024 * 1024;

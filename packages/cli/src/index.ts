export { analyzeCache, type CacheReport, type Segment } from './analyze.js';
export { CliError, EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE } from './cli-error.js';
export type { CliIo, CliIoInput, OutputStream } from './io.js';
export { main } from './main.js';

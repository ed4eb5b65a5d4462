export { analyzeCache, type CacheReport, type Segment } from './analyze.js';
export { CliError, EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE } from './cli-error.js';
export { main } from './main.js';

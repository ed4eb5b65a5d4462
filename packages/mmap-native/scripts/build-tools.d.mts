// Types of build-tools.mjs, a plain script (it runs before anything here is built).
export function missingBuildTools(env?: Record<string, string | undefined>): string[];
export function installHint(missing: readonly string[]): string;

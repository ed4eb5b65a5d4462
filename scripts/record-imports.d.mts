/** The URLs loaded so far (filled as reports arrive), and a wait for the last reports. */
export function recordImports(): { urls: string[]; settled: () => Promise<void> };

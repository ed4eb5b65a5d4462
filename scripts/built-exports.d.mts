export interface ExportsProbe {
  /** Each `exports` subpath's export names. */
  readonly subpaths: Record<string, string[]>;
  /** The files of memlayer packages the imports loaded, as "<package>/<path>". */
  readonly files: string[];
}

/** What the build's and the sources' `exports` subpaths export, and what each loaded. */
export function probeBuildAndSources(packageDir: string): {
  built: ExportsProbe;
  sources: ExportsProbe;
};

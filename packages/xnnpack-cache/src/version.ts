import { nodeFs } from './node-fs.js';

/**
 * This package's version, read from its package.json (src/ and dist/ sit beside it), so a
 * release that bumps the manifest changes it too; part of the default cache identity.
 */
export const PACKAGE_VERSION: string = (
  JSON.parse(nodeFs().readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

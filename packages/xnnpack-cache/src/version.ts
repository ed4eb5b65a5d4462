/** This package's version (kept equal to package.json by a test); part of the default cache identity. */
export const PACKAGE_VERSION = '0.1.0';

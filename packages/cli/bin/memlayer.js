#!/usr/bin/env node
// Thin launcher: the CLI itself is compiled to dist/ by `pnpm build` (src/bin.ts).
import '../dist/bin.js';

#!/usr/bin/env node
// Thin launcher: the CLI itself is compiled to dist/ by `pnpm build`.
import { main } from '../dist/main.js';

process.exitCode = await main(process.argv.slice(2));

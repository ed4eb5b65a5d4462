import type { Command } from '../command.js';
import { benchCommand } from './bench.js';
import { compactCommand } from './compact.js';
import { demoCommand } from './demo.js';
import { exportCommand } from './export.js';
import { inspectCommand } from './inspect.js';
import { runCommand } from './run.js';
import { statsCommand } from './stats.js';
import { verifyCommand } from './verify.js';

export const commands: Command[] = [
  inspectCommand,
  verifyCommand,
  compactCommand,
  statsCommand,
  runCommand,
  exportCommand,
  demoCommand,
  benchCommand,
];

import type { Command } from '../command.js';
import { inspectCommand } from './inspect.js';
import { statsCommand } from './stats.js';
import { verifyCommand } from './verify.js';

export const commands: Command[] = [inspectCommand, verifyCommand, statsCommand];

// `memlayer inspect model.pte`: methods, delegates, nodes by type, constants and their keys,
// and what of the program cannot run here.
import type { PteMethodSummary } from '@memlayer/module-loader';
import { formatBytes, renderTable } from './format.js';

/** Shortens a 64-digit key for a table; --json prints it whole. */
function shortKey(key: string): string {
  return key.length > 20 ? `${key.slice(0, 16)}…` : key;
}

export function renderProgramSummary(
  path: string,
  methods: readonly PteMethodSummary[],
  columns: number | undefined,
): string {
  const lines = [`${path}: ${methods.length} method${methods.length === 1 ? '' : 's'}`];
  for (const method of methods) {
    const sizes = (list: readonly (readonly number[] | null)[]) =>
      list.map((s) => (s === null ? '?' : `[${s.join(', ')}]`)).join(', ') || 'none';
    lines.push(
      '',
      `method "${method.name}": inputs ${sizes(method.inputs)} → outputs ${sizes(method.outputs)}, ${method.instructions} instruction${method.instructions === 1 ? '' : 's'}`,
    );
    for (const delegate of method.delegates) {
      const nodes = Object.entries(delegate.nodes)
        .map(([type, count]) => `${type} ×${count}`)
        .join(', ');
      lines.push(
        `  delegate ${delegate.index}: ${delegate.backend}, ${formatBytes(delegate.payloadBytes)}${nodes ? `; ${nodes}` : ''}`,
      );
      if (delegate.constants.length > 0) {
        lines.push(
          renderTable(
            ['node', 'role', 'dims', 'key (SHA-256)'],
            delegate.constants.map((constant) => [
              String(constant.node),
              constant.role,
              `[${constant.dims.join(', ')}]`,
              shortKey(constant.key),
            ]),
            columns,
          ),
        );
      }
    }
    lines.push(
      method.unsupported.length === 0
        ? '  runs here: yes'
        : `  runs here: no: ${method.unsupported.join('; ')}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

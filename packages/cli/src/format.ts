/** Human-readable byte count: 1536 → "1.50 KiB". */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(2)} ${units[unit]}`;
}

export function hex32(value: number): string {
  return `0x${(value >>> 0).toString(16).padStart(8, '0')}`;
}

export function formatMs(ms: number): string {
  return ms >= 100 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(2)} ms`;
}

/**
 * Renders rows as an aligned text table; numeric-looking cells are right-aligned. When the
 * table is wider than `columns`, each row becomes a block of "header: value" lines instead
 * (the first cell as the block's title), which reads at any width. With `packed`, a block's
 * "header: value" pairs share lines as far as the width allows and blocks are not spaced
 * apart: long lists (a cache's entries) stay a few lines per row.
 */
export function renderTable(
  headers: string[],
  rows: string[][],
  columns: number = Number.POSITIVE_INFINITY,
  { packed = false }: { packed?: boolean } = {},
): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const tableWidth = widths.reduce((sum, width) => sum + width, 0) + 2 * (widths.length - 1);
  if (tableWidth > columns) {
    return packed
      ? renderPackedRecords(headers, rows, columns)
      : renderRecords(headers, rows, columns);
  }
  const numeric = headers.map(
    (_, column) =>
      rows.length > 0 && rows.every((row) => /^[-+]?[\d.,]+( \w+)?x?$|^0x/.test(row[column] ?? '')),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        numeric[column] ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0),
      )
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join(
    '\n',
  );
}

/** The narrow form: one block per row, its first cell as title, then "  header: value" lines. */
function renderRecords(headers: string[], rows: string[][], columns: number): string {
  return rows
    .map((row) => {
      const [title = '', ...cells] = row;
      const lines = cells
        .map((cell, index) => [headers[index + 1] ?? '', cell] as const)
        .filter(([, cell]) => cell !== '')
        .flatMap(([header, cell]) =>
          wrap(`${header}: ${cell}`, columns - 2, 4).map((l) => `  ${l}`),
        );
      return [...wrap(title, columns, 2), ...lines].join('\n');
    })
    .join('\n\n');
}

/** The narrow form with `packed`: a title line, then "header: value" pairs filling lines. */
function renderPackedRecords(headers: string[], rows: string[][], columns: number): string {
  return rows
    .map((row) => {
      const [title = '', ...cells] = row;
      const lines = [...wrap(title, columns, 2)];
      let line = '';
      for (const [index, cell] of cells.entries()) {
        if (cell === '') continue;
        const pair = `${headers[index + 1] ?? ''}: ${cell}`;
        if (line !== '' && 2 + line.length + 2 + pair.length <= columns) {
          line = `${line}  ${pair}`;
          continue;
        }
        if (line !== '') lines.push(...wrap(line, columns - 2, 4).map((l) => `  ${l}`));
        line = pair;
      }
      if (line !== '') lines.push(...wrap(line, columns - 2, 4).map((l) => `  ${l}`));
      return lines.join('\n');
    })
    .join('\n');
}

/**
 * Breaks text into lines of at most `width` characters, at spaces when it can (a long
 * word such as a hex name is cut); continuation lines are indented by `indent`.
 */
export function wrap(text: string, width: number, indent = 0): string[] {
  if (!Number.isFinite(width) || text.length <= width) return [text];
  const room = Math.max(width, indent + 8);
  const lines: string[] = [];
  let rest = text;
  let prefix = '';
  while (prefix.length + rest.length > room) {
    const limit = room - prefix.length;
    const space = rest.lastIndexOf(' ', limit);
    const cut = space > limit / 3 ? space : limit;
    lines.push(prefix + rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
    prefix = ' '.repeat(indent);
  }
  if (rest !== '') lines.push(prefix + rest);
  return lines;
}

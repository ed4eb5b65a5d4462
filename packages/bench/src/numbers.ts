/** A figure for a table: thousands separators for large values, 3 significant digits else. */
export function formatValue(value: number | null): string {
  if (value === null || Number.isNaN(value)) return 'n/a';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '-∞';
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return Math.round(value).toLocaleString('en-US');
  if (magnitude === 0 || Number.isInteger(value)) return String(value);
  return magnitude >= 100 ? value.toFixed(1) : value.toPrecision(3);
}

/** "12.3x better", "2.10x worse", "equal". */
export function formatAdvantage(advantage: number): string {
  if (!Number.isFinite(advantage)) return advantage > 0 ? 'peer is 0: ∞ better' : 'n/a';
  if (Math.abs(advantage - 1) < 0.02) return 'equal (within 2%)';
  return advantage >= 1
    ? `${formatValue(advantage)}x better`
    : `${formatValue(1 / advantage)}x worse`;
}

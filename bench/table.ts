/**
 * A plain-text table: columns padded to their widest cell, numbers right-aligned. A row that is
 * `null` prints as a rule.
 */
export function table(header: string[], rows: Array<string[] | null>, rightAligned: boolean[]): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r ? r[c].length : 0))));
  const line = (cells: string[]) => cells
    .map((cell, c) => (rightAligned[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
    .join('  ')
    .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(header), rule, ...rows.map((r) => (r ? line(r) : rule))].join('\n');
}

/** A number for the table: thousands grouped, `digits` decimals; a dash when there is none. */
export function num(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  return value.toLocaleString('en-GB', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

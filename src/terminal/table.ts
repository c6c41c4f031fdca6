/** A plain-text table: columns padded to their widest cell, numbers right-aligned. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  // a column of numbers (a '-' standing for none among them) is right-aligned
  const numeric = header.map((_, i) => rows.some((r) => /^-?[\d.,]+$/.test(r[i] ?? '')) && rows.every((r) => /^-?[\d.,]+$|^-$/.test(r[i] ?? '')));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

// Plain aligned columns for the terminal. A dozen lines do not justify a table dependency.

export function columns(rows: string[][], gap = 2): string {
  const widths: number[] = [];
  for (const row of rows) for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + gap))).join(''))
    .join('\n');
}

// Every chart's numbers as a table behind a disclosure: readable without a mouse or a screen, and
// what the tests compare with the API.
export function ChartData({
  caption,
  columns,
  rows,
  testId,
}: {
  caption: string;
  columns: string[];
  rows: (string | number)[][];
  testId: string;
}) {
  return (
    <details>
      <summary className="muted">Data</summary>
      <div className="table-wrap" style={{ maxHeight: 260, overflowY: 'auto' }}>
        <table data-testid={testId}>
          <caption className="muted" style={{ textAlign: 'left' }}>
            {caption}
          </caption>
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c} scope="col">
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={String(r[0])}>
                {r.map((v, i) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: columns are positional.
                  <td key={i} className={typeof v === 'number' ? 'num' : undefined}>
                    {v}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

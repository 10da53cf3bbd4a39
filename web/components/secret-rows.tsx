'use client';
// Name and value rows whose values are secrets: a server's headers (URL mode) and a stdio server's
// environment (Command mode). A stored value is never sent to the browser: its row shows the name
// and "unchanged" until a new value is typed (the server keeps the stored one for a blank value).
import type { HeaderInput } from '../app/servers/actions';

export type SecretRow = HeaderInput & { stored: boolean };

export function SecretRows({
  rows,
  onEdit,
  onRows,
  words,
}: {
  rows: SecretRow[];
  /** A row's name or value typed. */
  onEdit: (i: number, change: Partial<HeaderInput>) => void;
  /** A row added or removed. */
  onRows: (next: SecretRow[]) => void;
  /** What the rows are called: the name's label, the noun of Add and Remove, and placeholders. */
  words: { name: string; noun: string; namePlaceholder: string; valuePlaceholder: string };
}) {
  return (
    <>
      {rows.map((row, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place.
        <div className="row" key={i}>
          <label>
            {words.name}
            <input
              value={row.name}
              onChange={(e) => onEdit(i, { name: e.target.value })}
              placeholder={words.namePlaceholder}
            />
          </label>
          <label>
            Value
            <input
              type="password"
              autoComplete="off"
              value={row.value}
              onChange={(e) => onEdit(i, { value: e.target.value })}
              placeholder={row.stored ? '•••••• (unchanged)' : words.valuePlaceholder}
            />
          </label>
          <button
            type="button"
            onClick={() => onRows(rows.filter((_, j) => j !== i))}
            aria-label={`Remove ${words.noun} ${row.name || i + 1}`}
          >
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onRows([...rows, { name: '', value: '', stored: false }])}>
        Add {words.noun}
      </button>
    </>
  );
}

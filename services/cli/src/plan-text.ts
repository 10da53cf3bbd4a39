// A fleet plan (control's apply summary) as an operator reads it on a terminal: one line per
// server that changes, marked + create, ↺ revive, ~ change, - retire; then the counts.
import type { ApplySummary } from '@mcp-fleet/control';
import { columns } from './table';

/** `1 server`, `2 servers`. */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}

export function planLines(s: ApplySummary): string {
  const rows: string[][] = [];
  for (const name of s.created) rows.push(['  +', name, `create; ${(s.changes[name] ?? []).join('; ')}`]);
  for (const name of s.revived) rows.push(['  ↺', name, (s.changes[name] ?? []).join('; ')]);
  for (const name of s.updated) rows.push(['  ~', name, (s.changes[name] ?? []).join('; ')]);
  for (const name of s.retired) rows.push(['  -', name, 'retire (its history is kept)']);
  // Applied all the same (a control from before warnings sends none).
  const warned = Object.entries(s.warnings ?? {}).flatMap(([name, ws]) => ws.map((w) => ['  !', name, w]));
  return [rows.length ? columns(rows) : '  no change', ...(warned.length ? [columns(warned)] : [])].join('\n');
}

/** `1 to create, 2 to change, 11 to retire, 3 unchanged`; tests counted when some are retired. */
export function totals(s: ApplySummary, done = false): string {
  const parts = [
    [s.created.length, done ? 'created' : 'to create'],
    [s.revived.length, done ? 'revived' : 'to revive'],
    [s.updated.length, done ? 'changed' : 'to change'],
    [s.retired.length, done ? 'retired' : 'to retire'],
  ]
    .filter(([n]) => n)
    .map(([n, what]) => `${n} ${what}`);
  parts.push(`${s.unchanged.length} unchanged`);
  return `Servers: ${parts.join(', ')}.`;
}

/** What a confirmation asks about: the servers and tests an apply retires. */
export function retiring(s: ApplySummary): string {
  const names = s.retired.slice(0, 8).join(', ') + (s.retired.length > 8 ? ', …' : '');
  const servers = s.retired.length ? `${count(s.retired.length, 'server')} (${names})` : '';
  const tests = s.testsRetired ? count(s.testsRetired, 'test') : '';
  return [servers, tests].filter(Boolean).join(' and ');
}

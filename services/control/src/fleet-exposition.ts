// Control's fleet-wide families (a series per server and region, per server, or per test) as
// exposition text, rendered once per snapshot and not per scrape. At 60,000 servers they are
// ~480,000 series: through prom-client's gauges (a hash of every series' labels at each set, then
// formatting) a scrape cost 2–9 s of control's event loop, which ingest shares, and Prometheus
// scraping every 15 s took control from 35% to 66% of a core and its commits seconds late
// (bench:pipeline). Their values change only when the snapshot they come from is read again
// (gauge-snapshot.ts), so the text is kept with the snapshot it was rendered from, and rendered a
// slice at a time with a turn of the event loop between slices. Written here rather than through
// prom-client because the exposition format of a gauge line is one line of text, and the library
// offers no way to hand it pre-rendered text.

/** Lines rendered between two turns of the event loop. */
export const RENDER_SLICE = 5_000;

export interface FleetFamily<T> {
  name: string;
  help: string;
  /** The series an item gives (label values in the family's label order) and its value, or none. */
  series(item: T): readonly [labels: Readonly<Record<string, string>>, value: number] | null;
}

/**
 * Gauge families over one list (a snapshot's); the same list is not rendered twice. The text is
 * kept as UTF-8 bytes, so a scrape writes it as it is: no copy of tens of MB per scrape to collect.
 */
export class FleetExposition<T> {
  private last: { items: readonly T[]; bytes: Promise<Buffer> } | undefined;

  constructor(private readonly families: readonly FleetFamily<T>[]) {}

  /** The families' text for `items`: rendered when the list is not the one rendered last (concurrent scrapes share it). */
  bytes(items: readonly T[]): Promise<Buffer> {
    if (this.last?.items !== items)
      this.last = { items, bytes: render(this.families, items).then((text) => Buffer.from(text)) };
    return this.last.bytes;
  }
}

async function render<T>(families: readonly FleetFamily<T>[], items: readonly T[]): Promise<string> {
  const blocks: string[] = [];
  let sinceTurn = 0;
  for (const f of families) {
    const lines = [`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} gauge`];
    // Prometheus refuses a whole scrape with one series twice; the first of a label set stands.
    const seen = new Set<string>();
    for (const item of items) {
      if (++sinceTurn >= RENDER_SLICE) {
        sinceTurn = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      const s = f.series(item);
      if (!s) continue;
      const labels = labelText(s[0]);
      if (seen.has(labels)) continue;
      seen.add(labels);
      lines.push(`${f.name}{${labels}} ${valueText(s[1])}`);
    }
    blocks.push(lines.join('\n'));
  }
  return `${blocks.join('\n\n')}\n`;
}

function labelText(labels: Readonly<Record<string, string>>): string {
  let out = '';
  for (const key in labels) out += `${out ? ',' : ''}${key}="${escapeLabel(labels[key] as string)}"`;
  return out;
}

// The text format's escapes: in label values backslash, double quote and newline; in help text
// backslash and newline. Label values here are operator-given names (servers, regions, tests).
const NEEDS_ESCAPE = /[\\"\n]/;
function escapeLabel(value: string): string {
  return NEEDS_ESCAPE.test(value) ? value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"') : value;
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function valueText(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

// The Prometheus text format for control's fleet-wide gauge families (fleet-gauges.ts keeps their
// lines per server). Written here rather than through prom-client: at 60,000 servers they are
// ~480,000 series, and prom-client's gauges hash every series' labels at each set and format them
// all again at each scrape (2–9 s of control's event loop, which ingest shares: bench:pipeline);
// the library takes no pre-rendered text, and a gauge line is one line.

export type Labels = Readonly<Record<string, string>>;

/** A family's HELP and TYPE lines. */
export function familyHead(name: string, help: string): string {
  return `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} gauge`;
}

/**
 * The lines of some series of one family, one per label set: Prometheus refuses a whole scrape
 * with a series twice, so the first of a label set stands. '' when there are none.
 */
export function seriesLines(name: string, series: Iterable<readonly [Labels, number]>): string {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const [labels, value] of series) {
    const text = labelText(labels);
    if (seen.has(text)) continue;
    seen.add(text);
    lines.push(`${name}{${text}} ${valueText(value)}`);
  }
  return lines.join('\n');
}

function labelText(labels: Labels): string {
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

// Grafana's provisioning and dashboards, checked without Grafana: the structure Grafana relies on
// (uids, datasources, variables, layout), every PromQL expression parsed and type-checked by
// promtool, and every metric name held against what our real /metrics endpoints expose.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type LiveMonitor, startLiveMonitor } from './live-monitor';

const DEPLOY = join(dirname(fileURLToPath(import.meta.url)), '..');
const GRAFANA = join(DEPLOY, 'grafana');
const DASHBOARDS = join(GRAFANA, 'dashboards');
const RULES = join(DEPLOY, 'prometheus', 'rules');
const PROMTOOL = '/usr/bin/promtool';
const PANEL_TYPES = new Set(['timeseries', 'stat', 'table', 'bargauge', 'heatmap', 'row']);

interface DatasourceRef {
  type: string;
  uid: string;
}
interface Target {
  refId: string;
  expr?: string;
  datasource?: DatasourceRef;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: DatasourceRef;
  targets?: Target[];
  panels?: Panel[];
  gridPos: { h: number; w: number; x: number; y: number };
}
interface Variable {
  name: string;
  type: string;
  datasource?: DatasourceRef;
  definition?: string;
  query?: string | { query: string };
  multi?: boolean;
  includeAll?: boolean;
}
interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  time: { from: string; to: string };
  templating: { list: Variable[] };
  panels: Panel[];
}
interface Provisioned {
  uid: string;
  type: string;
  url: string;
  isDefault?: boolean;
}

const readYaml = <T>(path: string) => parse(readFileSync(path, 'utf8')) as T;
const datasources = readYaml<{ datasources: Provisioned[] }>(
  join(GRAFANA, 'provisioning', 'datasources', 'prometheus.yml'),
).datasources;
const providers = readYaml<{ providers: { type: string; folder: string; options: { path: string } }[] }>(
  join(GRAFANA, 'provisioning', 'dashboards', 'mcp-fleet.yml'),
).providers;
const dashboards = readdirSync(DASHBOARDS)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => ({ file, dashboard: JSON.parse(readFileSync(join(DASHBOARDS, file), 'utf8')) as Dashboard }));

/** Rows nest panels only when collapsed; both levels count. */
const allPanels = (panels: Panel[]): Panel[] => panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);

/** A sample value per variable, so an expression with `$region` in it can be parsed as Prometheus would see it. */
const SAMPLES: Record<string, string> = {
  region: 'eu-west',
  job: 'mcp-fleet-agent',
  __rate_interval: '5m',
  __interval: '1m',
  __interval_ms: '60000',
  __range: '6h',
  __range_s: '21600',
  __range_ms: '21600000',
};
// $name, ${name}, ${name:format}, [[name]] and [[name:format]].
const VARIABLE = /\$\{(\w+)(?::[^}]*)?\}|\[\[(\w+)(?::[^\]]*)?\]\]|\$(\w+)/g;

const variablesIn = (expr: string) => [...expr.matchAll(VARIABLE)].map((m) => (m[1] ?? m[2] ?? m[3])!);
const substitute = (expr: string) =>
  expr.replace(VARIABLE, (all, a?: string, b?: string, c?: string) => SAMPLES[(a ?? b ?? c)!] ?? all);

/** The PromQL inside a templating query: `label_values(metric{…}, label)` → `metric{…}`, `query_result(q)` → `q`. */
function variableExpr(query: string): string | undefined {
  const labelValues = /^label_values\((.+),\s*\w+\s*\)$/s.exec(query.trim());
  if (labelValues) return labelValues[1]!.trim();
  const queryResult = /^query_result\((.+)\)$/s.exec(query.trim());
  return queryResult?.[1]?.trim();
}

interface Expr {
  where: string;
  raw: string;
  expr: string;
  variables: string[];
}

const exprs: Expr[] = dashboards.flatMap(({ file, dashboard }) => {
  const out: Expr[] = [];
  const add = (where: string, raw: string) =>
    out.push({ where: `${file} · ${where}`, raw, expr: substitute(raw), variables: variablesIn(raw) });
  for (const v of dashboard.templating.list) {
    if (v.type !== 'query') continue;
    const query = typeof v.query === 'string' ? v.query : (v.query?.query ?? v.definition ?? '');
    const expr = variableExpr(query);
    if (expr) add(`variable ${v.name}`, expr);
  }
  for (const p of allPanels(dashboard.panels))
    for (const t of p.targets ?? []) if (t.expr) add(`"${p.title}" ${t.refId}`, t.expr);
  return out;
});

// Label lists, matchers, strings and ranges hold no metric names; what is left is selectors and functions.
const LABEL_LISTS = /\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g;
const METRIC =
  /(?<![\w:.])(mcp_[a-z0-9_:]+|process_[a-z0-9_:]+|nodejs_[a-z0-9_:]+|up|[a-z_][a-z0-9_]*:[a-z0-9_:]+)(?![\w:])(?!\s*\()/g;

function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '[]')
    .replace(LABEL_LISTS, '');
  return [...new Set([...bare.matchAll(METRIC)].map((m) => m[1]!))];
}

function recordingRuleNames(): Set<string> {
  const names = new Set<string>();
  if (!existsSync(RULES)) return names;
  for (const f of readdirSync(RULES).filter((f) => /\.ya?ml$/.test(f))) {
    const doc = readYaml<{ groups?: { rules?: { record?: string }[] }[] } | null>(join(RULES, f));
    for (const g of doc?.groups ?? []) for (const r of g.rules ?? []) if (r.record) names.add(r.record);
  }
  return names;
}

describe('grafana provisioning', () => {
  it('provisions Prometheus as the default datasource, and Jaeger for traces', () => {
    const prometheus = datasources.find((d) => d.uid === 'prometheus');
    expect(prometheus).toMatchObject({ type: 'prometheus', url: 'http://prometheus:9090', isDefault: true });
    expect(datasources.filter((d) => d.isDefault)).toHaveLength(1);
    expect(new Set(datasources.map((d) => d.uid)).size).toBe(datasources.length);
    const jaeger = datasources.find((d) => d.uid === 'jaeger');
    if (jaeger) expect(jaeger).toMatchObject({ type: 'jaeger', url: 'http://jaeger:16686' });
  });

  it('loads the dashboards from files into the mcp-fleet folder', () => {
    expect(providers).toEqual([
      expect.objectContaining({
        type: 'file',
        folder: 'mcp-fleet',
        options: expect.objectContaining({ path: '/var/lib/grafana/dashboards' }),
      }),
    ]);
  });
});

describe('grafana dashboards', () => {
  it('are there, with unique uids and titles, and the shared conventions', () => {
    expect(dashboards.length).toBeGreaterThan(0);
    const uids = dashboards.map(({ dashboard }) => dashboard.uid);
    expect(new Set(uids).size, `uids: ${uids.join(', ')}`).toBe(uids.length);
    const titles = dashboards.map(({ dashboard }) => dashboard.title);
    expect(new Set(titles).size, `titles: ${titles.join(', ')}`).toBe(titles.length);
    for (const { file, dashboard: d } of dashboards) {
      expect(d.uid, file).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
      expect(d.title, file).toMatch(/^mcp-fleet · /);
      expect(d.schemaVersion, file).toBeGreaterThanOrEqual(36);
      expect(d.time, file).toEqual({ from: 'now-6h', to: 'now' });
      const region = d.templating.list.find((v) => v.name === 'region');
      expect(region, `${file}: the region variable`).toMatchObject({ type: 'query', multi: true, includeAll: true });
      const query = typeof region!.query === 'string' ? region!.query : region!.query?.query;
      expect(query?.replace(/\s/g, ''), file).toBe('label_values(mcp_handshake_total,region)');
    }
  });

  it('lay out panels of known types on the grid, with unique ids and no overlaps', () => {
    for (const { file, dashboard } of dashboards) {
      const panels = allPanels(dashboard.panels);
      expect(new Set(panels.map((p) => p.id)).size, `${file}: panel ids`).toBe(panels.length);
      for (const p of panels) {
        expect(PANEL_TYPES.has(p.type), `${file} "${p.title}": type ${p.type}`).toBe(true);
        expect(p.gridPos.x + p.gridPos.w, `${file} "${p.title}": wider than the grid`).toBeLessThanOrEqual(24);
      }
      const placed = dashboard.panels.map((p) => ({ title: p.title, ...p.gridPos }));
      for (const [i, a] of placed.entries())
        for (const b of placed.slice(i + 1)) {
          const overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
          expect(overlap, `${file}: "${a.title}" overlaps "${b.title}"`).toBe(false);
        }
    }
  });

  it('query only provisioned datasources, from every panel', () => {
    const uids = new Set(datasources.map((d) => d.uid));
    for (const { file, dashboard } of dashboards) {
      for (const v of dashboard.templating.list)
        if (v.datasource) expect(uids.has(v.datasource.uid), `${file} variable ${v.name}`).toBe(true);
      for (const p of allPanels(dashboard.panels)) {
        if (p.type === 'row') continue;
        const where = `${file} "${p.title}"`;
        expect(p.datasource?.uid && uids.has(p.datasource.uid), `${where}: datasource ${p.datasource?.uid}`).toBe(true);
        expect(
          p.targets?.some((t) => t.expr),
          `${where}: no query`,
        ).toBe(true);
        for (const t of p.targets ?? [])
          if (t.datasource) expect(uids.has(t.datasource.uid), `${where} ${t.refId}: datasource`).toBe(true);
      }
    }
  });

  it('define every variable their queries use', () => {
    for (const { file, dashboard } of dashboards) {
      const defined = new Set(dashboard.templating.list.map((v) => v.name));
      for (const e of exprs.filter((e) => e.where.startsWith(`${file} · `)))
        for (const name of e.variables) {
          if (name.startsWith('__')) continue;
          expect(defined.has(name), `${e.where}: $${name} is not a variable of the dashboard`).toBe(true);
        }
    }
    for (const e of exprs) expect(variablesIn(e.expr), `${e.where}: no sample value for these in SAMPLES`).toEqual([]);
  });

  it('parse as PromQL (promtool check rules)', () => {
    if (!existsSync(PROMTOOL))
      throw new Error(`${PROMTOOL} is missing: install promtool (Debian: apt-get install prometheus) to check PromQL`);
    expect(exprs.length).toBeGreaterThan(0);
    const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-grafana-'));
    try {
      const file = join(dir, 'dashboards.rules.yml');
      const rules = exprs.map((e, i) => ({ record: `check:${i}`, expr: e.expr }));
      writeFileSync(file, stringify({ groups: [{ name: 'grafana-dashboards', rules }] }, { lineWidth: 0 }));
      const run = spawnSync(PROMTOOL, ['check', 'rules', file], { encoding: 'utf8' });
      const output = `${run.stdout}${run.stderr}`;
      const failing = [...new Set([...output.matchAll(/"check:(\d+)"/g)].map((m) => Number(m[1])))];
      const detail = failing.map((i) => `${exprs[i]!.where}: ${exprs[i]!.expr}`).join('\n');
      expect(run.status, `promtool check rules failed:\n${output}\n${detail}`).toBe(0);
      expect(output).toContain(`SUCCESS: ${exprs.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('against the metrics our endpoints expose', () => {
    let monitor: LiveMonitor;
    let exposed: Set<string>;
    beforeAll(async () => {
      monitor = await startLiveMonitor();
      exposed = await monitor.exposedNames();
    });
    afterAll(async () => {
      await monitor?.close();
    });

    it('use only metrics that exist (or up, or our recording rules)', () => {
      const records = recordingRuleNames();
      const problems: string[] = [];
      for (const e of exprs) {
        const names = metricNames(e.expr);
        if (names.length === 0) problems.push(`${e.where}: no metric in ${e.expr}`);
        for (const name of names)
          if (name !== 'up' && !exposed.has(name) && !records.has(name)) problems.push(`${e.where}: ${name}`);
      }
      expect(problems).toEqual([]);
    });

    it('chart every mcp_ metric family the agents and control expose', async () => {
      const used = new Set(exprs.flatMap((e) => metricNames(e.expr)));
      const families = [...(await monitor.exposedFamilies())].filter((f) => f.startsWith('mcp_'));
      const uncharted = families.filter(
        (f) => !used.has(f) && !['_bucket', '_sum', '_count'].some((s) => used.has(f + s)),
      );
      expect(uncharted).toEqual([]);
    });
  });
});

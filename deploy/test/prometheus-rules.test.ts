// The Prometheus rules, their promtool tests, the Prometheus and Alertmanager configs and the runbooks, checked
// together: promtool accepts them, every alert has what on-call relies on (severity, runbook section, a firing
// test), and every metric a rule reads is one our real /metrics endpoints expose.
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type LiveMonitor, startLiveMonitor } from './live-monitor';

const run = promisify(execFile);
const PROMTOOL = '/usr/bin/promtool';
const AMTOOL = '/usr/bin/amtool';
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PROM_DIR = join(ROOT, 'deploy/prometheus');
const RULES_DIR = join(PROM_DIR, 'rules');
const TESTS_DIR = join(PROM_DIR, 'tests');
const RUNBOOKS = join(ROOT, 'docs/runbooks.md');
const RUNBOOK_BASE = 'https://github.com/mcp-fleet/mcp-fleet/blob/main/docs/runbooks.md#';
const SEVERITIES = ['critical', 'warning', 'info'];

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleFile {
  groups: { name: string; rules: Rule[] }[];
}
interface PromtoolTests {
  rule_files: string[];
  tests: {
    alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[];
    promql_expr_test?: { expr: string }[];
  }[];
}

async function yamlFiles(dir: string, suffix: string): Promise<string[]> {
  return (await readdir(dir))
    .filter((f) => f.endsWith(suffix))
    .sort()
    .map((f) => join(dir, f));
}

async function readYaml<T>(path: string): Promise<T> {
  return parse(await readFile(path, 'utf8')) as T;
}

/** Runs a tool; never throws on a non-zero exit, so a failing check shows the tool's own output. */
async function tool(bin: string, args: string[]): Promise<{ code: number; stdout: string; output: string }> {
  try {
    const { stdout, stderr } = await run(bin, args, { maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, output: `${stdout}${stderr}` };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string; message: string };
    const stdout = e.stdout ?? '';
    return { code: typeof e.code === 'number' ? e.code : -1, stdout, output: `${stdout}${e.stderr ?? ''}${e.message}` };
  }
}

async function installed(bin: string): Promise<boolean> {
  return access(bin, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function headings(markdown: string): string[] {
  const out: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (m) out.push(m[1]!);
  }
  return out;
}

/** Metric names an expression reads: recording rules (with colons), mcp_* and `up`; label values never count. */
function metricNames(expr: string): string[] {
  const code = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  const names = new Set<string>();
  for (const [token] of code.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g))
    if (token.includes(':') || /^(mcp_[a-z0-9_]+|up)$/.test(token)) names.add(token);
  return [...names];
}

let alerts: Rule[] = [];
let records: Rule[] = [];
let ruleFiles: string[] = [];
let testFiles: string[] = [];

beforeAll(async () => {
  ruleFiles = await yamlFiles(RULES_DIR, '.yml');
  testFiles = await yamlFiles(TESTS_DIR, '.test.yml');
  const rules = (await Promise.all(ruleFiles.map((f) => readYaml<RuleFile>(f)))).flatMap((f) =>
    f.groups.flatMap((g) => g.rules),
  );
  alerts = rules.filter((r) => r.alert);
  records = rules.filter((r) => r.record);
});

describe('promtool', () => {
  beforeAll(async () => {
    if (!(await installed(PROMTOOL)))
      throw new Error(`${PROMTOOL} is missing: install it with \`apt-get install -y prometheus\` (CI does)`);
  });

  it('accepts both rule files', async () => {
    expect(ruleFiles.map((f) => f.slice(RULES_DIR.length + 1))).toEqual([
      'mcp-fleet-alerts.yml',
      'mcp-fleet-recording.yml',
    ]);
    const { code, output } = await tool(PROMTOOL, ['check', 'rules', ...ruleFiles]);
    expect(code, output).toBe(0);
  });

  it('passes every unit test', { timeout: 120_000 }, async () => {
    expect(testFiles.length).toBeGreaterThan(0);
    const { code, output } = await tool(PROMTOOL, ['test', 'rules', ...testFiles]);
    expect(code, output).toBe(0);
  });

  // The config names /etc/prometheus/rules (the container's mount); check it with the rules found here.
  it('accepts prometheus.yml, rules included', async () => {
    const config = await readYaml<Record<string, unknown>>(join(PROM_DIR, 'prometheus.yml'));
    expect(config.rule_files).toEqual(['/etc/prometheus/rules/*.yml']);
    const dir = await mkdtemp(join(tmpdir(), 'mcpfleet-prom-'));
    try {
      const copy = join(dir, 'prometheus.yml');
      await writeFile(copy, stringify({ ...config, rule_files: [join(RULES_DIR, '*.yml')] }));
      const { code, output } = await tool(PROMTOOL, ['check', 'config', copy]);
      expect(code, output).toBe(0);
      for (const f of ruleFiles) expect(output).toContain(f);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('prometheus.yml', () => {
  it('scrapes control and both agents under the job names the alerts use', async () => {
    const config = await readYaml<{
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
      alerting: { alertmanagers: { static_configs: { targets: string[] }[] }[] };
    }>(join(PROM_DIR, 'prometheus.yml'));
    const targets = Object.fromEntries(
      config.scrape_configs.map((s) => [s.job_name, s.static_configs.flatMap((c) => c.targets)]),
    );
    expect(targets).toEqual({
      'mcp-fleet-control': ['control:7070'],
      'mcp-fleet-agent': ['agent-eu-west:7071', 'agent-us-east:7071'],
    });
    expect(config.alerting.alertmanagers[0]!.static_configs[0]!.targets).toEqual(['alertmanager:9093']);
    for (const a of alerts)
      for (const [, job] of a.expr.matchAll(/\bjob="([^"]+)"/g)) expect(Object.keys(targets), a.alert).toContain(job);
  });
});

describe('alertmanager.yml', () => {
  const path = join(PROM_DIR, 'alertmanager.yml');

  it('routes every severity to a defined receiver', async () => {
    interface Route {
      receiver?: string;
      matchers?: string[];
      routes?: Route[];
    }
    const config = await readYaml<{ route: Route; receivers: { name: string }[] }>(path);
    const receivers = new Set(config.receivers.map((r) => r.name));
    const routed = (config.route.routes ?? []).flatMap((r) => r.matchers ?? []);
    expect(receivers).toContain(config.route.receiver);
    for (const r of config.route.routes ?? []) expect(receivers).toContain(r.receiver);
    for (const s of SEVERITIES) expect(routed).toContain(`severity="${s}"`);
  });

  it('inhibits only alerts that exist, on labels both alerts carry', async () => {
    interface Inhibit {
      source_matchers: string[];
      target_matchers: string[];
      equal: string[];
    }
    const config = await readYaml<{ inhibit_rules: Inhibit[] }>(path);
    const named = (matchers: string[]) => {
      const m = matchers.map((x) => /^alertname=~?"(.+)"$/.exec(x)).find(Boolean);
      const pattern = new RegExp(`^(?:${m![1]})$`);
      return alerts.filter((a) => pattern.test(a.alert!));
    };
    // The labels an alert's expr keeps: those of its outermost `by (…)`.
    const labelsOf = (expr: string) => (/\bby \(([^)]*)\)/.exec(expr)?.[1] ?? '').split(',').map((l) => l.trim());
    expect(config.inhibit_rules.length).toBeGreaterThan(0);
    for (const rule of config.inhibit_rules) {
      const sources = named(rule.source_matchers);
      const targets = named(rule.target_matchers);
      expect(sources.length, rule.source_matchers.join()).toBeGreaterThan(0);
      expect(targets.length, rule.target_matchers.join()).toBeGreaterThan(0);
      for (const a of [...sources, ...targets])
        for (const label of rule.equal) expect(labelsOf(a.expr), `${a.alert} keeps ${label}`).toContain(label);
    }
  });

  // amtool ships with Debian's prometheus-alertmanager, which CI does not need; check with it when present.
  it('passes amtool check-config when amtool is installed', async () => {
    if (!(await installed(AMTOOL))) return;
    const check = await tool(AMTOOL, ['check-config', path]);
    expect(check.code, check.output).toBe(0);
    const route = await tool(AMTOOL, ['config', 'routes', 'test', `--config.file=${path}`, 'severity=critical']);
    expect(route.stdout.trim(), route.output).toBe('critical');
  });
});

describe('alerts', () => {
  it('exist', () => {
    expect(alerts.length).toBeGreaterThan(0);
    expect(new Set(alerts.map((a) => a.alert)).size).toBe(alerts.length);
  });

  it('are named McpFleet… in CamelCase, with for, severity, summary and a templated description', () => {
    for (const a of alerts) {
      expect(a.alert).toMatch(/^McpFleet(?:[A-Z][a-z0-9]*)+$/);
      expect(a.for, a.alert).toMatch(/^\d+[smhd]$/);
      expect(SEVERITIES, a.alert).toContain(a.labels?.severity);
      expect(a.annotations?.summary, a.alert).toBeTruthy();
      expect(a.annotations?.description, a.alert).toMatch(/\{\{[^}]*\$(labels|value)/);
    }
  });

  it('each link to their own section of docs/runbooks.md', async () => {
    const anchors = headings(await readFile(RUNBOOKS, 'utf8')).map(githubAnchor);
    expect(new Set(anchors).size, 'duplicate headings get -1 anchors on GitHub').toBe(anchors.length);
    for (const a of alerts) {
      const url = a.annotations?.runbook_url ?? '';
      expect(url.startsWith(RUNBOOK_BASE), `${a.alert}: ${url}`).toBe(true);
      const anchor = url.slice(RUNBOOK_BASE.length);
      expect(anchor, a.alert).toBe(githubAnchor(a.alert!));
      expect(anchors, a.alert).toContain(anchor);
    }
  });

  it('each have a promtool test expecting them to fire and one expecting them quiet', async () => {
    const firing = new Set<string>();
    const quiet = new Set<string>();
    for (const file of testFiles)
      for (const t of (await readYaml<PromtoolTests>(file)).tests)
        for (const a of t.alert_rule_test ?? []) (a.exp_alerts?.length ? firing : quiet).add(a.alertname);
    for (const a of alerts) {
      expect(firing.has(a.alert!), `${a.alert} has no test expecting it to fire`).toBe(true);
      expect(quiet.has(a.alert!), `${a.alert} has no test expecting it quiet`).toBe(true);
    }
  });
});

describe('recording rules', () => {
  it('are named level:metric:operations and listed at the top of their file', async () => {
    const text = await readFile(join(RULES_DIR, 'mcp-fleet-recording.yml'), 'utf8');
    const listed = new Set(text.slice(0, text.indexOf('\ngroups:')).split(/\s+/));
    for (const r of records) {
      expect(r.record).toMatch(/^[a-z_]+:[a-z0-9_]+:[a-z0-9_]+$/);
      expect(listed.has(r.record!), `${r.record} is missing from the header comment`).toBe(true);
    }
  });

  it('each have a promtool test', async () => {
    const tested = new Set<string>();
    for (const file of testFiles)
      for (const t of (await readYaml<PromtoolTests>(file)).tests)
        for (const e of t.promql_expr_test ?? []) for (const n of metricNames(e.expr)) tested.add(n);
    for (const r of records) expect(tested.has(r.record!), `${r.record} has no promql_expr_test`).toBe(true);
  });
});

describe('metrics the rules read', () => {
  let monitor: LiveMonitor | undefined;

  beforeAll(async () => {
    monitor = await startLiveMonitor();
  });
  afterAll(async () => {
    await monitor?.close();
  });

  it('are exposed by control and the agents, scraped (`up`) or recorded here', async () => {
    const exposed = await monitor!.exposedNames();
    const recorded = new Set(records.map((r) => r.record!));
    const unknown: string[] = [];
    for (const r of [...records, ...alerts])
      for (const name of metricNames(r.expr))
        if (!exposed.has(name) && name !== 'up' && !recorded.has(name)) unknown.push(`${r.alert ?? r.record}: ${name}`);
    expect(unknown).toEqual([]);
    // The check sees the names it should: the rules read agent and control metrics alike.
    const read = new Set([...records, ...alerts].flatMap((r) => metricNames(r.expr)));
    for (const name of ['mcp_handshake_total', 'mcp_server_up', 'mcp_agents_seen', 'up']) expect(read).toContain(name);
  });
});

// `npm run bench:memory`: what the monitor costs in memory, against issue 19's goals.
//   --part monitor --minutes N   `npm start` (embedded defaults, the demo, the dashboard) on a temp
//                                data directory; the process tree's summed RSS, per process and in
//                                total, peak and last (goal: under 400 MB after ten minutes).
//   --part agent --agent-seconds S   one agent at 1,000 probes in flight against 1,000 slow loopback
//                                targets: peak RSS beside the same agent idle, and KiB per probe in
//                                flight (goal: under 200 MB).
//   --part all (default)         both, the agent first (it is short).
// The agent runs three times: from its sources through tsx with node's defaults (`node
// bin/mcp-fleet.js agent`, how it ran before), the same with the flags the image's launcher gives it
// (bin/mcp-fleet.sh), and bundled with those flags (bundle.ts: as the image runs it); then bundled
// once per --node-flags=… (repeatable) with those flags instead.
// Other flags: --targets (1000), --delay-ms (10000, how long a slow target holds its answer),
// --sample-seconds (5), --json.
// Linux only: RSS comes from /proc. Parts live in ./memory/.
import { mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { bundle } from '../bundle';
import { launcherFlags } from '../launcher-flags';
import { type AgentFigures, CHILD, runAgentPart } from './memory/agent-part';
import { type MonitorFigures, runMonitorPart } from './memory/monitor-part';

/** Issue 19's goals, in MB as the issue says them (MiB here: the stricter reading). */
const MONITOR_GOAL_MIB = 400;
const AGENT_GOAL_MIB = 200;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

function num(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, not ${JSON.stringify(raw)}`);
  return n;
}

const verdict = (value: number, goal: number) =>
  value < goal ? `under the ${goal} MiB goal` : `OVER the ${goal} MiB goal`;

function pad(rows: (string | number)[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => String(c).padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function printMonitor(f: MonitorFigures): void {
  const rows: (string | number)[][] = [['process', 'pid', 'peak MiB', 'last MiB']];
  for (const p of f.processes) rows.push([p.name, p.pid, p.peakMib, p.lastMib]);
  rows.push(['total (tree)', '', f.total.peakMib, f.total.lastMib]);
  console.log(`\nnpm start, ${f.minutes} min (up after ${f.upAfterS} s, ${f.samples} samples of the tree's RSS)\n`);
  console.log(pad(rows));
  console.log(
    `\ntotal after ${f.minutes} min: ${f.total.lastMib} MiB, ${verdict(f.total.lastMib, MONITOR_GOAL_MIB)} (peak ${f.total.peakMib} MiB)`,
  );
}

function printAgent(runs: AgentFigures[]): void {
  const f0 = runs[0]!;
  console.log(
    `\nagent: ${f0.targets} slow loopback targets (each answers after ${f0.delayMs} ms), concurrency ${f0.concurrency}, ${f0.seconds} s loaded; RSS from /proc, heap from process.memoryUsage() (MiB)\n`,
  );
  const rows: (string | number)[][] = [
    [
      'agent (runs from, node flags)',
      'state',
      'in flight',
      'RSS',
      'heap used',
      'heap total',
      'external',
      'arrayBuffers',
      'probes done',
      'CPU ms/probe',
    ],
  ];
  const shipped = launcherFlags('agent').join(' ');
  const name = (f: AgentFigures) => {
    const flags = f.nodeFlags.join(' ') || 'node defaults';
    return `${f.from}, ${flags}${f.from === 'bundle' && flags === shipped ? ' (as shipped)' : ''}`;
  };
  for (const f of runs) {
    const flags = name(f);
    const i = f.idle;
    const p = f.peak;
    rows.push([
      flags,
      'idle (baseline)',
      0,
      i.rssMib,
      i.heapUsedMib,
      i.heapTotalMib,
      i.externalMib,
      i.arrayBuffersMib,
      '',
      '',
    ]);
    rows.push([
      '',
      'loaded (peak RSS)',
      p.inFlight,
      p.rssMib,
      p.heapUsedMib,
      p.heapTotalMib,
      p.externalMib,
      p.arrayBuffersMib,
      f.probesDone,
      f.cpuMsPerProbe,
    ]);
  }
  console.log(pad(rows));
  console.log('');
  for (const f of runs)
    console.log(
      `${name(f).padEnd(26)} peak ${f.peak.rssMib} MiB, ${verdict(f.peak.rssMib, AGENT_GOAL_MIB)}; ${f.kibPerProbe} KiB per probe in flight over the idle agent`,
    );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      part: { type: 'string', default: 'all' },
      minutes: { type: 'string' },
      'agent-seconds': { type: 'string' },
      targets: { type: 'string' },
      'delay-ms': { type: 'string' },
      'sample-seconds': { type: 'string' },
      'node-flags': { type: 'string', multiple: true },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const part = values.part;
  if (!['monitor', 'agent', 'all'].includes(part)) throw new Error(`--part is monitor, agent or all, not ${part}`);
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const out: { agent?: AgentFigures[]; monitor?: MonitorFigures } = {};
  if (part !== 'monitor') {
    const targets = num(values.targets, '--targets', 1_000);
    const shipped = launcherFlags('agent');
    const variants: { nodeFlags: string[]; bundled: boolean }[] = [
      { nodeFlags: [], bundled: false },
      { nodeFlags: shipped, bundled: false },
      { nodeFlags: shipped, bundled: true },
      ...(values['node-flags'] ?? []).map((f) => ({ nodeFlags: f.split(/\s+/).filter(Boolean), bundled: true })),
    ];
    // The child bundled as the image bundles the command, inside the package (its imports resolve
    // from node_modules as the image's do), removed at the end.
    const dir = mkdtempSync(join(ROOT, 'services', 'cli', '.tmp-bench-agent-'));
    try {
      await bundle(CHILD, dir);
      out.agent = [];
      for (const v of variants)
        out.agent.push(
          await runAgentPart({
            targets,
            concurrency: targets,
            seconds: num(values['agent-seconds'], '--agent-seconds', 30),
            delayMs: num(values['delay-ms'], '--delay-ms', 10_000),
            nodeFlags: v.nodeFlags,
            ...(v.bundled ? { bundled: join(dir, 'agent-child.js') } : {}),
            say,
          }),
        );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    if (!values.json) printAgent(out.agent);
  }
  if (part !== 'agent') {
    out.monitor = await runMonitorPart({
      root: ROOT,
      minutes: num(values.minutes, '--minutes', 10),
      sampleSeconds: num(values['sample-seconds'], '--sample-seconds', 5),
      say,
    });
    if (!values.json) printMonitor(out.monitor);
  }
  if (values.json) console.log(JSON.stringify(out, null, 2));
}

await main();

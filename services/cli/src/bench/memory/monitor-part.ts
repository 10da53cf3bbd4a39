// `bench:memory --part monitor`: `npm start` as an operator runs it (embedded PGlite, the in-process
// queue, the demo fleet and the dashboard) on a temporary data directory and free ports, its whole
// process tree (npm, the shell, the monitor, whatever they start) sampled from /proc every few
// seconds for N minutes. The goal is the tree's summed RSS after ten minutes.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mib, type ProcRss, treeRss } from './proc-tree';

export interface MonitorPartOptions {
  root: string;
  minutes: number;
  sampleSeconds: number;
  /** Extra environment for the monitor (e.g. NODE_OPTIONS to try a flag). */
  env?: Record<string, string>;
  say: (line: string) => void;
}

export interface ProcessFigures {
  name: string;
  pid: number;
  peakMib: number;
  lastMib: number;
}

export interface MonitorFigures {
  minutes: number;
  upAfterS: number;
  samples: number;
  processes: ProcessFigures[];
  total: { peakMib: number; lastMib: number };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/** Two consecutive free ports (agents take one per region: the demo has two). */
async function freePorts(n: number): Promise<number> {
  for (let tries = 0; tries < 20; tries++) {
    const first = await freePort();
    const ok = await Promise.all(
      Array.from(
        { length: n - 1 },
        (_, i) =>
          new Promise<boolean>((resolve) => {
            const s = createServer();
            s.once('error', () => resolve(false));
            s.listen(first + i + 1, '127.0.0.1', () => s.close(() => resolve(true)));
          }),
      ),
    );
    if (ok.every(Boolean)) return first;
  }
  throw new Error('no run of free ports found');
}

function untilUp(child: ChildProcess, log: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      log.push(text);
      if (log.length > 200) log.shift();
      if (text.includes('mcp-fleet is up')) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (c: Buffer) => {
      log.push(c.toString());
      if (log.length > 200) log.shift();
    });
    child.once('exit', (code) => reject(new Error(`npm start exited (${code}) before it was up:\n${log.join('')}`)));
  });
}

export async function runMonitorPart(opts: MonitorPartOptions): Promise<MonitorFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-bench-memory-'));
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  // The embedded defaults, whatever this shell has set.
  for (const name of ['DATABASE_URL', 'NATS_URL', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'])
    delete env[name];
  env.MCP_FLEET_API_PORT = String(await freePort());
  env.PORT = String(await freePort());
  env.MCP_FLEET_AGENT_PORT = String(await freePorts(2));
  env.LOG_LEVEL = 'warn';
  const started = Date.now();
  // Its own process group, so whatever it leaves behind can be ended together at the end.
  const child = spawn('npm', ['start', '--', '--data-dir', join(dir, 'data')], {
    cwd: opts.root,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  const byPid = new Map<number, ProcessFigures>();
  const totals: number[] = [];
  const sample = () => {
    const tree: ProcRss[] = treeRss(child.pid!);
    let total = 0;
    for (const p of tree) {
      total += p.rssKib;
      const f = byPid.get(p.pid) ?? { name: p.name, pid: p.pid, peakMib: 0, lastMib: 0 };
      f.peakMib = Math.max(f.peakMib, mib(p.rssKib));
      f.lastMib = mib(p.rssKib);
      byPid.set(p.pid, f);
    }
    // A process that ended since counts 0 now.
    for (const f of byPid.values()) if (!tree.some((p) => p.pid === f.pid)) f.lastMib = 0;
    totals.push(mib(total));
    return { total, count: tree.length };
  };
  try {
    // From the spawn on, once a second until it is up: the start (the build check, the embedded
    // database's first start in a helper process) is part of the peak.
    const starting = setInterval(sample, 1_000);
    try {
      await untilUp(child, log);
    } finally {
      clearInterval(starting);
    }
    const upAfterS = Math.round((Date.now() - started) / 1000);
    opts.say(`npm start is up after ${upAfterS} s; sampling every ${opts.sampleSeconds} s for ${opts.minutes} min`);
    const until = started + opts.minutes * 60_000;
    let lastSaid = 0;
    for (;;) {
      const { total, count } = sample();
      if (Date.now() - lastSaid >= 60_000) {
        lastSaid = Date.now();
        opts.say(`  ${((Date.now() - started) / 60_000).toFixed(1)} min: ${mib(total)} MiB in ${count} processes`);
      }
      if (Date.now() >= until) break;
      await new Promise((r) => setTimeout(r, opts.sampleSeconds * 1000));
    }
    return {
      minutes: opts.minutes,
      upAfterS,
      samples: totals.length,
      processes: [...byPid.values()].filter((f) => f.peakMib > 0),
      total: { peakMib: Math.max(...totals), lastMib: totals.at(-1) ?? 0 },
    };
  } finally {
    await stopTree(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SIGINT to the group (as Ctrl-C would), then SIGKILL whatever is left after 20 s. */
async function stopTree(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const group = -child.pid!;
  try {
    process.kill(group, 'SIGINT');
  } catch {}
  const timer = setTimeout(() => {
    try {
      process.kill(group, 'SIGKILL');
    } catch {}
  }, 20_000);
  await exited;
  clearTimeout(timer);
}

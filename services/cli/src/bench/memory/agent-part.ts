// `bench:memory --part agent`: one agent (a process of its own) against N slow loopback targets (a
// second process: N ports, each answering after a delay) at concurrency N, so N probes are in flight
// at once. First the same agent idle (the baseline), then loaded; RSS read from /proc every second.
// KiB per probe in flight = (peak RSS − idle RSS) / probes in flight at the peak.
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { AgentChildIn, AgentChildOut } from './agent-child';
import { mib, rssKib } from './proc-tree';

export interface AgentPartOptions {
  targets: number;
  concurrency: number;
  seconds: number;
  /** How long a slow target holds each answer. */
  delayMs: number;
  /** Extra node flags for the agent's process (e.g. `--max-semi-space-size=2`). */
  nodeFlags?: string[];
  /** The agent's child bundled (bundle.ts, as the image runs an agent): its path. Unset: the sources, through tsx. */
  bundled?: string;
  say: (line: string) => void;
}

type Breakdown = { heapUsedMib: number; heapTotalMib: number; externalMib: number; arrayBuffersMib: number };

export interface AgentFigures {
  nodeFlags: string[];
  /** What the agent ran from: its TypeScript sources through tsx, or the bundle. */
  from: 'sources' | 'bundle';
  targets: number;
  concurrency: number;
  delayMs: number;
  seconds: number;
  idle: { rssMib: number } & Breakdown;
  peak: { rssMib: number; inFlight: number } & Breakdown;
  maxInFlight: number;
  probesDone: number;
  kibPerProbe: number;
  /** The agent's CPU time (user + system) while loaded, per probe done: what a memory saving costs. */
  cpuMsPerProbe: number;
}

/** The child's sources: bundle them (bundle.ts) for an agent as the image runs it. */
export const CHILD = fileURLToPath(new URL('./agent-child.ts', import.meta.url));

function forkChild(args: string[], nodeFlags: string[] = [], bundled?: string) {
  const child: ChildProcess = fork(bundled ?? CHILD, args, {
    execArgv: bundled ? nodeFlags : ['--import', 'tsx', ...nodeFlags],
    env: { ...process.env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = <T extends AgentChildOut['type']>(type: T, timeoutMs = 60_000) =>
    new Promise<Extract<AgentChildOut, { type: T }>>((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`${args[0]} process: no ${type} in ${timeoutMs} ms`)), timeoutMs);
      const onMessage = (m: AgentChildOut) =>
        m.type === type && done(undefined, m as Extract<AgentChildOut, { type: T }>);
      const onExit = (code: number | null) => done(new Error(`${args[0]} process exited (${code})`));
      const done = (err?: Error, m?: Extract<AgentChildOut, { type: T }>) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (err) reject(err);
        else resolve(m!);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  return {
    pid: child.pid!,
    next,
    send: (m: AgentChildIn) => child.send(m),
    async ask<T extends AgentChildOut['type']>(m: AgentChildIn, type: T) {
      const answer = next(type);
      child.send(m);
      return answer;
    },
    async end() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      await this.ask({ type: 'stop' }, 'stopped').catch(() => undefined);
      if (child.connected) child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

const toMib = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;
const breakdown = (m: NodeJS.MemoryUsage): Breakdown => ({
  heapUsedMib: toMib(m.heapUsed),
  heapTotalMib: toMib(m.heapTotal),
  externalMib: toMib(m.external),
  arrayBuffersMib: toMib(m.arrayBuffers),
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runAgentPart(opts: AgentPartOptions): Promise<AgentFigures> {
  const fleet = forkChild(['fleet', String(opts.targets), String(opts.delayMs)]);
  let agent: ReturnType<typeof forkChild> | undefined;
  try {
    const { urls = [] } = await fleet.next('ready', 120_000);
    agent = forkChild(['agent', String(opts.concurrency)], opts.nodeFlags, opts.bundled);
    await agent.next('ready');
    // Idle: the agent started, its queue empty. The highest of five readings a second apart.
    let idleKib = 0;
    let idleSample: NodeJS.MemoryUsage | undefined;
    let cpuBefore: NodeJS.CpuUsage | undefined;
    for (let i = 0; i < 5; i++) {
      await sleep(1_000);
      idleKib = Math.max(idleKib, rssKib(agent.pid) ?? 0);
      const s = await agent.ask({ type: 'sample' }, 'sample');
      idleSample = s.memory;
      cpuBefore = s.cpu;
    }
    opts.say(`agent idle: ${mib(idleKib)} MiB RSS; loading ${urls.length} slow targets (${opts.delayMs} ms each)`);
    agent.send({ type: 'load', urls, timeoutMs: opts.delayMs * 3 });
    let peakKib = 0;
    let peak: { inFlight: number; memory: NodeJS.MemoryUsage } | undefined;
    let maxInFlight = 0;
    let done = 0;
    let cpuAfter = cpuBefore!;
    const until = Date.now() + opts.seconds * 1000;
    while (Date.now() < until) {
      await sleep(1_000);
      const kib = rssKib(agent.pid) ?? 0;
      const s = await agent.ask({ type: 'sample' }, 'sample');
      maxInFlight = Math.max(maxInFlight, s.inFlight);
      done = s.done;
      cpuAfter = s.cpu;
      if (kib >= peakKib) {
        peakKib = kib;
        peak = { inFlight: s.inFlight, memory: s.memory };
      }
    }
    const inFlightAtPeak = Math.max(1, peak?.inFlight ?? maxInFlight);
    return {
      nodeFlags: opts.nodeFlags ?? [],
      from: opts.bundled ? 'bundle' : 'sources',
      targets: opts.targets,
      concurrency: opts.concurrency,
      delayMs: opts.delayMs,
      seconds: opts.seconds,
      idle: { rssMib: mib(idleKib), ...breakdown(idleSample!) },
      peak: { rssMib: mib(peakKib), inFlight: peak?.inFlight ?? 0, ...breakdown(peak!.memory) },
      maxInFlight,
      probesDone: done,
      kibPerProbe: Math.round((peakKib - idleKib) / inFlightAtPeak),
      cpuMsPerProbe:
        Math.round(
          ((cpuAfter.user - cpuBefore!.user + cpuAfter.system - cpuBefore!.system) / 1000 / Math.max(1, done)) * 100,
        ) / 100,
    };
  } finally {
    await agent?.end();
    await fleet.end();
  }
}

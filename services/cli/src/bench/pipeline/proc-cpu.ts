// CPU by process, read from /proc: the pipeline's parts (control, agents, nats-server, Postgres) and
// the targets apart, over a pass's measured window. Linux only, as the bench is.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Child } from './children';
import { round } from './settings';

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** A process's CPU ticks; with `reaped`, also its ended children's (cutime, cstime). */
function ticksOf(pid: number, reaped = false): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th,
    // cutime and cstime (children waited for) the 14th and 15th.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]) + (reaped ? Number(f[13]) + Number(f[14]) : 0);
  } catch {
    return 0;
  }
}

/**
 * Ticks per process of a group that starts and ends processes (Postgres: a backend per connection).
 * A group's CPU over a window is the sum of per-pid differences: a process born in the window counts
 * from 0, and one that ended is in its parent's reaped ticks (the postmaster's), so it is neither
 * lost nor subtracted. (Its CPU from before the window is counted too: a small overcount.)
 */
function groupTicks(name: string): Map<number, number> {
  return new Map(pidsNamed(name).map((pid) => [pid, ticksOf(pid, true)]));
}

function groupDelta(a: Map<number, number>, b: Map<number, number>): number {
  let ticks = 0;
  for (const [pid, t] of b) ticks += t - (a.get(pid) ?? 0);
  return ticks;
}

/** Every process with this command name (Postgres is one process per connection). */
function pidsNamed(name: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/comm`, 'utf8').trim() === name) out.push(Number(d));
    } catch {}
  }
  return out;
}

function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return { busy: total - idle, total };
}

export type CpuSnapshot = ReturnType<typeof cpuSnapshot>;

export function cpuSnapshot(fleetPid: number, agents: readonly Child[]) {
  const sum = (pids: number[]) => pids.reduce((a, p) => a + ticksOf(p), 0);
  return {
    main: ticksOf(process.pid),
    agents: sum(agents.map((a) => a.pid)),
    fleet: ticksOf(fleetPid),
    nats: groupTicks('nats-server'),
    postgres: groupTicks('postgres'),
    machine: machineTicks(),
  };
}

/** % of one core over the window, per process group; the machine's busy share is of all cores. */
export function cpuPercent(a: CpuSnapshot, b: CpuSnapshot, seconds: number, agentInline: boolean) {
  const pct = (ticks: number) => round((ticks / CLK_TCK / seconds) * 100);
  const parts: Record<string, number> = {
    [agentInline ? 'control+agent' : 'control']: pct(b.main - a.main),
    ...(agentInline ? {} : { agents: pct(b.agents - a.agents) }),
    'targets (child)': pct(b.fleet - a.fleet),
    'nats-server': pct(groupDelta(a.nats, b.nats)),
    'postgres (all)': pct(groupDelta(a.postgres, b.postgres)),
  };
  const busy = b.machine.busy - a.machine.busy;
  const total = b.machine.total - a.machine.total;
  // Busy share of the whole machine, as % of one core (2 cores = 200%); "other" is everyone else's work.
  const machine = round((busy / Math.max(1, total)) * 100 * cores());
  parts.other = round(Math.max(0, machine - Object.values(parts).reduce((x, y) => x + y, 0)));
  parts['machine busy'] = machine;
  return parts;
}

function cores(): number {
  return readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((l) => /^cpu\d/.test(l)).length;
}

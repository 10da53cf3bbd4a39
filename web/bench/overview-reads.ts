// bench:web --reads: the overview's store reads one at a time against a seeded database, each
// timed by the CPU it costs (the Postgres backends' utime + stime from /proc, and this process's)
// as well as the wall clock. CPU time barely moves when the machine is shared, so it says what a
// change saved even where page latencies are noisy. Linux only (it reads /proc), with Postgres on
// this machine.
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import {
  breakingChangeCount,
  conformanceShare,
  downgradesOverTime,
  eraMovesList,
  fleetSummary,
  openStore,
  type RangeName,
  rangeWindow,
  revisionDrift,
} from '@mcp-fleet/store';

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

/** CPU ms so far of every Postgres backend serving `database` (the store's pool, whichever connection runs a read). */
function backendsCpuMs(database: string): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      // A backend's title: "postgres: 15/main: <user> <database> <client> <state>".
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(` ${database} `)) continue;
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return (ticks * 1000) / TICKS_PER_S;
}

export interface ReadCost {
  range: RangeName;
  read: string;
  postgresMs: number;
  nodeMs: number;
  wallMs: number;
}

export async function measureOverviewReads(url: string, opts: { calls: number }): Promise<ReadCost[]> {
  const database = new URL(url).pathname.slice(1);
  const store = await openStore({ databaseUrl: url, poolSize: 5 });
  const out: ReadCost[] = [];
  try {
    for (const range of ['24h', '30d'] as const) {
      const w = rangeWindow(range);
      // What the overview page reads (web/app/(overview)/page.tsx), with the same arguments.
      const reads: [string, () => Promise<unknown>][] = [
        [
          'fleet summary',
          () => fleetSummary(store.db, { since: w.since, until: w.until, countRuns: false, eras: false }),
        ],
        ['revision drift', () => revisionDrift(store.db, w)],
        ['downgrades', () => downgradesOverTime(store.db, w)],
        ['era moves (500)', () => eraMovesList(store.db, { since: w.since, limit: 500 })],
        ['conformance share', () => conformanceShare(store.db)],
        ['breaking changes', () => breakingChangeCount(store.db, { since: w.since, until: w.until })],
      ];
      for (const [read, call] of reads) {
        await call(); // warm: plans cached, sealed drift points written
        const pg0 = backendsCpuMs(database);
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        for (let i = 0; i < opts.calls; i++) await call();
        const wall = performance.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        out.push({
          range,
          read,
          postgresMs: (backendsCpuMs(database) - pg0) / opts.calls,
          nodeMs: (cpu.user + cpu.system) / 1000 / opts.calls,
          wallMs: wall / opts.calls,
        });
      }
    }
  } finally {
    await store.close();
  }
  return out;
}

// Revision drift (drift.ts) against a brute-force oracle: on a seeded fleet (moves, flaps, pending
// moves, tests born inside the range, retired tests and servers, two regions), every point of every
// range must be the picture the oracle rebuilds by undoing each state's later moves, whether the
// point was computed (the picture now, corrected for the servers that changed) or read back sealed.
// Then what sealing means: a sealed point keeps the picture it had; a region's drift is never sealed.
import { REVISION_NAMES } from '@mcp-fleet/probe';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DRIFT_SETTLE_MS,
  driftPoints,
  eraMoves,
  pruneDriftPoints,
  revisionDrift,
  type Store,
  servers as serversTable,
  testStates,
  tests as testsTable,
} from '../src';
import { BACKENDS } from './backends';
import { seededRandom, serverWithTests } from './fixtures';

const HOUR = 3_600_000;
/** On every grid (the 30 d range's 6 h buckets included). */
const NOW = Date.UTC(2026, 0, 20);
const REGIONS = ['eu-west', 'us-east'];

interface OracleState {
  serverId: string;
  region: string;
  current: string;
  created: number;
  live: boolean;
  moves: { at: number; from: string; state: string }[];
}

/** The picture at `at`, the slow way: each live state born by then, its later moves undone. */
function oracle(states: OracleState[], at: number, view: 'confirmed' | 'raw', region?: string) {
  const speakers = new Map<string, Set<string>>();
  for (const s of states) {
    if (!s.live || s.created > at || (region && s.region !== region)) continue;
    const later = s.moves
      .filter((m) => m.at > at && (view === 'raw' || m.state !== 'flapping'))
      .sort((a, b) => a.at - b.at);
    const revision = later[0]?.from ?? s.current;
    const set = speakers.get(revision) ?? new Set<string>();
    set.add(s.serverId);
    speakers.set(revision, set);
  }
  const all = new Set([...speakers.values()].flatMap((s) => [...s]));
  return {
    servers: Object.fromEntries(REVISION_NAMES.map((r) => [r, speakers.get(r)?.size ?? 0])),
    speaking: all.size,
  };
}

describe.each(BACKENDS)('revision drift on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  const states: OracleState[] = [];

  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
    const rnd = seededRandom(19);
    const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
    for (let i = 0; i < 36; i++) {
      const { server, tests } = await serverWithTests(store.db, rnd() < 0.3 ? ['newest', '2025-06-18'] : ['newest']);
      const serverRetired = i % 17 === 16;
      if (serverRetired)
        await store.db
          .update(serversTable)
          .set({ retiredAt: new Date(NOW - HOUR) })
          .where(eq(serversTable.id, server.id));
      for (const t of tests) {
        // Most tests are older than every range; some are born inside them (the last 40 days).
        const created = rnd() < 0.7 ? NOW - 60 * 24 * HOUR : NOW - Math.floor(rnd() * 40 * 24 * HOUR);
        const testRetired = t.mode === 'newest' && i % 13 === 12;
        await store.db
          .update(testsTable)
          .set({ createdAt: new Date(created), ...(testRetired ? { retiredAt: new Date(NOW - HOUR) } : {}) })
          .where(eq(testsTable.id, t.id));
        for (const region of REGIONS) {
          if (rnd() < 0.15) continue; // never ran there
          // A chain of moves over the last 35 days, the newest ending at the current revision.
          const chain = [pick(REVISION_NAMES)];
          const moves: OracleState['moves'] = [];
          const count = Math.floor(rnd() * 5);
          let at = NOW - 35 * 24 * HOUR;
          for (let k = 0; k < count; k++) {
            at += Math.floor(rnd() * 7 * 24 * HOUR) + 1000;
            const from = chain[chain.length - 1]!;
            const to = pick(REVISION_NAMES.filter((r) => r !== from));
            const state = rnd() < 0.1 ? 'pending' : 'confirmed';
            moves.push({ at, from, state });
            chain.push(to);
            // Sometimes it goes straight back: a flap, both halves marked.
            if (rnd() < 0.2) {
              at += 60_000;
              moves[moves.length - 1]!.state = 'flapping';
              moves.push({ at, from: to, state: 'flapping' });
              chain.push(from);
            }
          }
          const current = chain[chain.length - 1]!;
          await store.db.insert(testStates).values({ testId: t.id, region, currentRevision: current });
          if (moves.length > 0)
            await store.db.insert(eraMoves).values(
              moves.map((m, k) => ({
                serverId: server.id,
                testId: t.id,
                region,
                fromRevision: m.from,
                toRevision: chain[k + 1]!,
                downgrade: false,
                eraChanged: false,
                at: new Date(m.at),
                state: m.state as 'confirmed',
              })),
            );
          if (t.mode === 'newest')
            states.push({
              serverId: server.id,
              region,
              current,
              created,
              live: !serverRetired && !testRetired,
              moves,
            });
        }
      }
    }
  }, 120_000);
  afterAll(async () => backend.dispose());

  const RANGES = [
    { name: '1h', ms: HOUR, buckets: 60 },
    { name: '24h', ms: 24 * HOUR, buckets: 96 },
    { name: '7d', ms: 7 * 24 * HOUR, buckets: 168 },
    { name: '30d', ms: 30 * 24 * HOUR, buckets: 120 },
  ];
  const sealed = async () =>
    Number(
      ((await store.db.execute(sql`select count(*)::int as n from drift_points`)) as { rows: { n: number }[] }).rows[0]!
        .n,
    );

  for (const view of ['confirmed', 'raw'] as const)
    for (const region of [undefined, 'us-east'])
      it(`every point of every range is the oracle's picture (${view}, ${region ?? 'all regions'}), computed and then sealed`, async () => {
        for (const r of RANGES) {
          const q = {
            since: new Date(NOW - r.ms),
            until: new Date(NOW),
            buckets: r.buckets,
            view,
            region,
            now: new Date(NOW),
          };
          // Twice: the first read seals the settled points (fleet-wide), the second reads them back.
          for (const round of [1, 2]) {
            const drift = await revisionDrift(store.db, q);
            expect(drift.points).toHaveLength(r.buckets);
            for (const p of drift.points) {
              const want = oracle(states, p.at.getTime(), view, region);
              expect({ range: r.name, round, at: p.at.toISOString(), ...p.servers, speaking: p.speaking }).toEqual({
                range: r.name,
                round,
                at: p.at.toISOString(),
                ...want.servers,
                speaking: want.speaking,
              });
            }
          }
        }
        const stored = await sealed();
        if (region) return;
        // The fleet-wide ranges sealed their settled points: the 30 d range's are 6 h apart.
        expect(stored).toBeGreaterThan(100);
      });

  it('a region is never sealed: its query string would otherwise become stored rows', async () => {
    const before = await sealed();
    await revisionDrift(store.db, {
      since: new Date(NOW - 30 * 24 * HOUR),
      until: new Date(NOW),
      buckets: 120,
      region: "eu-west' or 1=1 --",
      now: new Date(NOW),
    });
    expect(await sealed()).toBe(before);
  });

  it('a sealed point keeps its picture; points newer than the settle time are computed afresh', async () => {
    const q = { since: new Date(NOW - 24 * HOUR), until: new Date(NOW), buckets: 96, now: new Date(NOW) };
    const before = await revisionDrift(store.db, q);
    // A live server with a current revision leaves the fleet.
    const leaving = states.find((s) => s.live && s.created < NOW - 30 * 24 * HOUR)!;
    await store.db
      .update(serversTable)
      .set({ retiredAt: new Date(NOW) })
      .where(eq(serversTable.id, leaving.serverId));
    const after = await revisionDrift(store.db, q);
    for (const [i, p] of after.points.entries()) {
      const settled = p.at.getTime() <= NOW - DRIFT_SETTLE_MS;
      if (settled) expect(p).toEqual(before.points[i]);
      else expect(p.speaking).toBe(before.points[i]!.speaking - 1);
    }
    await store.db.update(serversTable).set({ retiredAt: null }).where(eq(serversTable.id, leaving.serverId));
    // Sealed rows are whole pictures, one per view and instant.
    const rows = await store.db.select().from(driftPoints).limit(1);
    expect(Object.keys(rows[0]!.servers).every((r) => (REVISION_NAMES as readonly string[]).includes(r))).toBe(true);
  });

  it('retention drops sealed points older than the runs it keeps', async () => {
    const cutoff = new Date(NOW - 10 * 24 * HOUR);
    const older = async () =>
      (await store.db.select().from(driftPoints)).filter((p) => p.at.getTime() < cutoff.getTime()).length;
    expect(await older()).toBeGreaterThan(0);
    const kept = (await sealed()) - (await older());
    expect(await pruneDriftPoints(store.db, { before: cutoff })).toBeGreaterThan(0);
    expect(await older()).toBe(0);
    expect(await sealed()).toBe(kept);
  });
});

// The seeded fleet's plan: servers, tests and each test/region's timeline of revisions, small
// and built in memory (seed.ts says the story the data tells).
import { randomUUID } from 'node:crypto';
import { REVISIONS, type Revision } from '@mcp-fleet/probe';

export const DEFAULT_REGIONS = ['eu-west', 'us-east'];
export const DEFAULT_DAYS = 30;

export interface SeedOptions {
  servers: number;
  runs: number;
  days?: number;
  regions?: string[];
  now?: Date;
  /** Progress lines (one per phase); default none. */
  log?: (msg: string) => void;
}

export const DAY_MS = 86_400_000;
export const INTERVAL_MS = 60_000;
export const TIMEOUT_MS = 10_000;
/** Slots a test/region needs before its timeline may move (fewer: it keeps one revision). */
const MIN_SLOTS_FOR_MOVES = 8;
/** A slot no run reaches: "this move never happens". */
export const NEVER = 2_147_483_647;
export const FAILING_PIN: Revision = '2025-03-26';

const RANK = new Map<string, number>(REVISIONS.map((r, i) => [r.revision, i + 1]));
export const rank = (r: Revision) => RANK.get(r)!;
export const byRank = (k: number): Revision => REVISIONS[k - 1]!.revision;

// ─── the plan: servers, tests, timelines, detections (small, built here) ─────────────────────

export interface ServerPlan {
  n: number;
  id: string;
  name: string;
  /** The revision the server speaks at the end of the range (its newest-supported tests' current). */
  final: Revision;
  pin: Revision | null;
  failingPin: boolean;
}

export interface TestRegionPlan {
  q: number;
  testId: string;
  serverId: string;
  region: string;
  mode: 'newest' | 'pinned';
  pin: Revision | null;
  /** Slot from which the (pinned) test fails its assertion; null = never. */
  failFrom: number | null;
  /** The newest-supported test's timeline: revs[0] from the start, revs[i] from slot slots[i-1]. */
  revs: Revision[];
  slots: number[];
  /** The test/region's last slot (runs not divisible by test × region leave some one slot shorter). */
  lastSlot: number;
}

/** Deterministic noise in [0, 1) from a few integers (a 32-bit mix), so two seeds of one size agree. */
export function noise(...xs: number[]): number {
  let h = 0x9e3779b9;
  for (const x of xs) {
    h = Math.imul(h ^ (x | 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return (h >>> 0) / 2 ** 32;
}

/** Weighted toward the newer revisions: 40% current, 30% 2025-11-25, 15%, 10%, 5% the oldest. */
function finalRevision(n: number): Revision {
  const u = noise(n, 1);
  return byRank(u < 0.4 ? 5 : u < 0.7 ? 4 : u < 0.85 ? 3 : u < 0.95 ? 2 : 1);
}

export function planFleet(opts: Required<Omit<SeedOptions, 'log'>>) {
  const { servers: count, runs, regions } = opts;
  const width = Math.max(4, String(count).length);
  const serverPlans: ServerPlan[] = [];
  const trs: TestRegionPlan[] = [];
  const testRows: { id: string; server_id: string; mode: string; pinned_revision: string | null }[] = [];

  for (let n = 1; n <= count; n++) {
    const id = randomUUID();
    // Every 4th server also has a test pinned to a legacy revision, the four in turn.
    const pin = n % 4 === 0 ? byRank(1 + ((n / 4) % 4)) : null;
    // A quarter of the 2025-03-26 pins stop passing: their server dropped that revision.
    const failingPin = pin === FAILING_PIN && Math.floor(n / 4 / 4) % 4 === 0;
    let final = finalRevision(n);
    if (pin && !failingPin && rank(final) < rank(pin)) final = pin;
    if (failingPin && rank(final) < 4) final = byRank(4);
    serverPlans.push({ n, id, name: `srv-${String(n).padStart(width, '0')}`, final, pin, failingPin });
  }

  // Test × region q runs in every slot s: run j = s·Q + q, so slot s is complete up to the last one.
  const tests: { server: ServerPlan; id: string; mode: 'newest' | 'pinned' }[] = [];
  for (const server of serverPlans) {
    tests.push({ server, id: randomUUID(), mode: 'newest' });
    if (server.pin) tests.push({ server, id: randomUUID(), mode: 'pinned' });
  }
  const Q = tests.length * regions.length;
  if (runs < Q) throw new Error(`${runs} runs cannot give each of the ${Q} tests × regions one run`);
  const minSlots = Math.floor(runs / Q);

  for (const t of tests) {
    const { server } = t;
    testRows.push({
      id: t.id,
      server_id: server.id,
      mode: t.mode,
      pinned_revision: t.mode === 'pinned' ? server.pin : null,
    });
    // The server's revision changes 0-3 times over the range (1.5 on average), seen by every region.
    const moves = minSlots >= MIN_SLOTS_FOR_MOVES ? Math.floor(noise(server.n, 2) * 4) : 0;
    const chain: Revision[] = [server.final];
    for (let i = moves; i >= 1; i--) {
      const to = rank(chain[0]!);
      // Mostly upgrades (the fleet moves toward the current revision), a quarter downgrades.
      const downgrade = to === 1 || (to < 5 && noise(server.n, 3, i) < 0.25);
      chain.unshift(byRank(downgrade ? to + 1 : to - 1));
    }
    const slots: number[] = [];
    for (let i = 1; i <= moves; i++) {
      // Move i falls somewhere in the i-th of `moves` equal parts of the range: uniform over the
      // fleet, so every range (the last 24 h too) has its share of moves.
      const f = (i - 1 + noise(server.n, 4, i)) / moves;
      const s = Math.min(minSlots - 1, Math.max(1, Math.floor(f * minSlots), (slots[i - 2] ?? 0) + 1));
      slots.push(s);
    }
    regions.forEach((region, g) => {
      const q = trs.length;
      const lastSlot = Math.floor((runs - 1 - q) / Q);
      let revs = chain;
      let at = slots;
      // ~3% of servers: the last region has not seen the latest change yet (a rollout in progress).
      if (t.mode === 'newest' && g === regions.length - 1 && g > 0 && moves > 0 && noise(server.n, 5) < 0.03) {
        revs = chain.slice(0, -1);
        at = slots.slice(0, -1);
      }
      let failFrom: number | null = null;
      if (t.mode === 'pinned' && server.failingPin) {
        failFrom = Math.max(1, minSlots - Math.max(1, Math.round(minSlots * (0.05 + 0.03 * noise(server.n, 6)))));
      }
      trs.push({
        q,
        testId: t.id,
        serverId: server.id,
        region,
        mode: t.mode,
        pin: t.mode === 'pinned' ? server.pin : null,
        failFrom,
        revs: t.mode === 'pinned' ? [server.pin!] : revs,
        slots: t.mode === 'pinned' ? [] : at,
        lastSlot,
      });
    });
  }
  return { servers: serverPlans, tests: testRows, trs, Q, slotsPerTr: Math.ceil(runs / Q) };
}

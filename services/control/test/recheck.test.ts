// The freshness recheck (issue 17, item 5): a newest-supported test's job is marked `recheck` on the
// first slot of each recheck window of its server's judgement, so it looks its revision up again
// (newest first) at most that often with no era signal. Deterministic and stateless: the slot alone
// decides. Pinned tests and detections never recheck.
import { createMemoryBus, type Job } from '@mcp-fleet/bus';
import { createLogger } from '@mcp-fleet/log';
import { afterEach, describe, expect, it } from 'vitest';
import { isRecheckSlot, recheckShiftMs, type ScheduleEntry, Scheduler } from '../src/scheduler';

const MINUTE = 60_000;
const log = createLogger('test', 'silent');
let closing: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closing?.();
  closing = undefined;
});

function entry(fields: Partial<ScheduleEntry> & Pick<ScheduleEntry, 'id'>): ScheduleEntry {
  return {
    kind: 'handshake',
    region: 'eu-west',
    serverId: 'server-1',
    serverName: 'orders',
    testId: fields.kind === 'detection' ? null : fields.id,
    url: 'http://127.0.0.1:1/mcp',
    headers: {},
    revision: 'newest',
    depth: 'handshake',
    script: null,
    intervalMs: MINUTE,
    timeoutMs: 10_000,
    recheckMs: 10 * MINUTE,
    ...fields,
  };
}

/** Runs a scheduler on a clock stepped one second at a time for `ms`: every job it publishes. */
async function run(entries: ScheduleEntry[], ms: number, start = Date.UTC(2026, 6, 28, 9, 3, 7)): Promise<Job[]> {
  const bus = createMemoryBus({ log });
  closing = () => bus.close();
  let now = start;
  const jobs: Job[] = [];
  const scheduler = new Scheduler({
    bus,
    currentRevision: () => '2025-11-25',
    policy: () => ({ allow: ['127.0.0.0/8'], deny: [] }),
    now: () => now,
    onPublished: (job, _lag, duplicate) => {
      if (!duplicate) jobs.push(job);
    },
  });
  scheduler.setEntries(entries);
  for (; now < start + ms; now += 1_000) await scheduler.tick();
  return jobs;
}

describe('isRecheckSlot', () => {
  it('is true for the first slot of each window only, and for every slot when the interval is longer than the window', () => {
    const recheck = 10 * MINUTE;
    const offset = 17_000;
    const slots = Array.from({ length: 60 }, (_, i) => offset + i * MINUTE);
    const marked = slots.filter((s) => isRecheckSlot(s, MINUTE, recheck));
    // 60 one-minute slots span six ten-minute windows: one each.
    expect(marked).toHaveLength(6);
    expect(new Set(marked.map((s) => Math.floor(s / recheck))).size).toBe(6);
    expect(slots.every((s) => isRecheckSlot(s, 2 * recheck, recheck))).toBe(true);
    expect(slots.every((s) => isRecheckSlot(s, recheck, recheck))).toBe(true);
  });

  it('moves the windows by the shift, still one slot per window', () => {
    const recheck = 10 * MINUTE;
    const slots = Array.from({ length: 60 }, (_, i) => 17_000 + i * MINUTE);
    const shift = 4 * MINUTE;
    const marked = slots.filter((s) => isRecheckSlot(s, MINUTE, recheck, shift));
    expect(marked.length).toBeGreaterThanOrEqual(5);
    expect(new Set(marked.map((s) => Math.floor((s - shift) / recheck))).size).toBe(marked.length);
    // Each marked slot is the first at or after its window's start.
    for (const s of marked) expect((s - shift) % recheck).toBeLessThan(MINUTE);
  });
});

describe('recheckShiftMs', () => {
  it("spreads a fleet's rechecks over the window, stably per test", () => {
    const day = 24 * 60 * MINUTE;
    const shifts = Array.from({ length: 1000 }, (_, i) => recheckShiftMs(`test-${i}`, day));
    expect(shifts.every((s) => s >= 0 && s < day)).toBe(true);
    // No hour of the day takes more than a few times its share (1000 tests / 24 hours ≈ 42).
    const perHour = new Map<number, number>();
    for (const s of shifts)
      perHour.set(Math.floor(s / (60 * MINUTE)), (perHour.get(Math.floor(s / (60 * MINUTE))) ?? 0) + 1);
    expect(perHour.size).toBe(24);
    expect(Math.max(...perHour.values())).toBeLessThan(100);
    expect(recheckShiftMs('test-7', day)).toBe(shifts[7]);
  });
});

describe('the scheduler', () => {
  it('marks exactly one job per recheck window of a newest-supported test, and never a pinned test or a detection', async () => {
    const jobs = await run(
      [
        entry({ id: 'newest-test' }),
        entry({ id: 'pinned-test', revision: '2025-11-25', recheckMs: null }),
        // Even a pinned entry given a window by mistake does not recheck: a pin never looks up.
        entry({ id: 'pinned-odd', revision: '2025-06-18' }),
        entry({ id: 'server-1', kind: 'detection', revision: null, recheckMs: null }),
      ],
      40 * MINUTE,
    );
    const newest = jobs.filter((j) => j.testId === 'newest-test');
    expect(newest.length).toBeGreaterThanOrEqual(39);
    const shift = recheckShiftMs('newest-test', 10 * MINUTE);
    const windowOf = (slot: number) => Math.floor((slot - shift) / (10 * MINUTE));
    const windows = new Map<number, number>();
    for (const j of newest) windows.set(windowOf(j.slot), (windows.get(windowOf(j.slot)) ?? 0) + (j.recheck ? 1 : 0));
    // Every window whose first slot was published has exactly one recheck (the first window may start mid-way).
    for (const [w, count] of windows) {
      const first = newest.filter((j) => windowOf(j.slot) === w)[0]!;
      expect(count, `window ${w}`).toBe(isRecheckSlot(first.slot, MINUTE, 10 * MINUTE, shift) ? 1 : 0);
    }
    expect(newest.filter((j) => j.recheck)).toHaveLength(4);
    expect(jobs.filter((j) => j.testId !== 'newest-test' && j.recheck)).toEqual([]);
    expect(jobs.filter((j) => j.kind === 'detection').length).toBeGreaterThan(0);
  });

  it('is stateless: a second scheduler (another control, a restart) marks the same slots', async () => {
    const a = await run([entry({ id: 'newest-test' })], 25 * MINUTE);
    const b = await run([entry({ id: 'newest-test' })], 25 * MINUTE);
    expect(b.filter((j) => j.recheck).map((j) => j.jobId)).toEqual(a.filter((j) => j.recheck).map((j) => j.jobId));
  });

  it('marks every slot when the interval is longer than the recheck window', async () => {
    const jobs = await run([entry({ id: 'newest-test', intervalMs: 20 * MINUTE, timeoutMs: 10_000 })], 61 * MINUTE);
    expect(jobs.length).toBeGreaterThanOrEqual(3);
    expect(jobs.every((j) => j.recheck)).toBe(true);
  });
});

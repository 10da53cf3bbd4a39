// How the monitor judges a server seen from several regions (docs/regions.md): when a test is
// failing (quorum of regions, consecutive failed runs), when an era move is confirmed (k runs in
// a region, or a quorum of regions) or flapping (back inside a window), how often a
// newest-supported test looks its revision up again, how long regions may disagree before it
// alerts, and the uptime a server is held to. The fleet file's `defaults:` set it for the fleet
// and a server's entry overrides it; what is stored with a server is the resolved Judgement.
import { z } from 'zod';
import { formatDuration, parseDuration } from './durations';

/** `half` (at least half the test's regions, as openstatus), `all`, `any` or a number of regions. */
export type Quorum = 'half' | 'all' | 'any' | number;

/** A server's resolved judgement: every field set, durations in milliseconds. */
export interface Judgement {
  /** How many of a test's regions must fail for the test to be failing (its consensus state). */
  quorum: Quorum;
  /** Consecutive failed runs in a region before that region counts as failing (Checkly's N in a row). */
  failAfter: number;
  /** Runs in one region that must see an era move before it is confirmed (a quorum of regions confirms it sooner). */
  confirmAfter: number;
  /** A move back (A→B→A) inside this window is flapping: one event, not two moves. */
  flapWindowMs: number;
  /** A newest-supported test looks its revision up again (newest first) at least this often. */
  recheckMs: number;
  /** Regions negotiating different revisions alert after this long. */
  disagreementAfterMs: number;
  /** Uptime target in percent over 30 days (the SLO line; the error budget is what 100 − slo allows). */
  slo: number;
}

export const DEFAULT_JUDGEMENT: Readonly<Judgement> = Object.freeze({
  quorum: 'half',
  failAfter: 1,
  confirmAfter: 2,
  flapWindowMs: 30 * 60_000,
  recheckMs: 24 * 3_600_000,
  disagreementAfterMs: 10 * 60_000,
  slo: 99.5,
});

/** The most regions a numeric quorum may name (a fleet has far fewer). */
export const MAX_QUORUM = 64;
/** The most runs failAfter and confirmAfter may ask for. */
export const MAX_RUNS = 100;
/** The longest window, recheck or disagreement time (the store keeps milliseconds in an integer). */
const MAX_MS = 7 * 86_400_000;
/** The shortest recheck: a lookup costs a server up to four requests. */
export const MIN_RECHECK_MS = 60_000;

const quorumMessage = `half, all, any or a number of regions (1 to ${MAX_QUORUM})`;
// One sentence whatever is wrong (0, -1, 65, 1.5, "most"): the number branch says it too.
export const quorumSchema = z.union(
  [z.enum(['half', 'all', 'any']), z.number().int(quorumMessage).min(1, quorumMessage).max(MAX_QUORUM, quorumMessage)],
  { error: quorumMessage },
);

const runsMessage = `a whole number of runs from 1 to ${MAX_RUNS}`;
const runs = z.number(runsMessage).int(runsMessage).min(1, runsMessage).max(MAX_RUNS, runsMessage);
const sloMessage = 'a percentage from 50 to 99.999 (the uptime target; 100 leaves no error budget)';
const span = (min: number) =>
  z.string().refine(
    (s) => {
      const ms = parseDuration(s);
      return ms !== undefined && ms >= min && ms <= MAX_MS;
    },
    `a duration like 30m or 24h, from ${min === 0 ? '0s' : formatDuration(min)} to 168h`,
  );

/**
 * The judgement keys as the fleet file (its `defaults:` and each server) and the API write them:
 * each optional, durations as text. A fleet file or an API body is hostile input: bounded here.
 */
export const judgementFields = {
  quorum: quorumSchema.optional(),
  failAfter: runs.optional(),
  confirmAfter: runs.optional(),
  flapWindow: span(1_000).optional(),
  recheck: span(MIN_RECHECK_MS).optional(),
  disagreementAfter: span(0).optional(),
  slo: z.number(sloMessage).min(50, sloMessage).max(99.999, sloMessage).optional(),
};
export const judgementEntry = z.strictObject(judgementFields);
export type JudgementEntry = z.infer<typeof judgementEntry>;

/** The judgement of a server: its own entry over the fleet's defaults over DEFAULT_JUDGEMENT. */
export function resolveJudgement(...layers: (JudgementEntry | undefined)[]): Judgement {
  const j: Judgement = { ...DEFAULT_JUDGEMENT };
  for (const l of layers) {
    if (!l) continue;
    if (l.quorum !== undefined) j.quorum = l.quorum;
    if (l.failAfter !== undefined) j.failAfter = l.failAfter;
    if (l.confirmAfter !== undefined) j.confirmAfter = l.confirmAfter;
    if (l.flapWindow !== undefined) j.flapWindowMs = parseDuration(l.flapWindow) ?? j.flapWindowMs;
    if (l.recheck !== undefined) j.recheckMs = parseDuration(l.recheck) ?? j.recheckMs;
    if (l.disagreementAfter !== undefined)
      j.disagreementAfterMs = parseDuration(l.disagreementAfter) ?? j.disagreementAfterMs;
    if (l.slo !== undefined) j.slo = l.slo;
  }
  return j;
}

/** A judgement written back as the file writes it: only what differs from `base` (the defaults). */
export function judgementToEntry(j: Judgement, base: Judgement = DEFAULT_JUDGEMENT): JudgementEntry {
  const e: JudgementEntry = {};
  if (j.quorum !== base.quorum) e.quorum = j.quorum;
  if (j.failAfter !== base.failAfter) e.failAfter = j.failAfter;
  if (j.confirmAfter !== base.confirmAfter) e.confirmAfter = j.confirmAfter;
  if (j.flapWindowMs !== base.flapWindowMs) e.flapWindow = formatDuration(j.flapWindowMs);
  if (j.recheckMs !== base.recheckMs) e.recheck = formatDuration(j.recheckMs);
  if (j.disagreementAfterMs !== base.disagreementAfterMs) e.disagreementAfter = formatDuration(j.disagreementAfterMs);
  if (j.slo !== base.slo) e.slo = j.slo;
  return e;
}

/** The resolved form as stored (servers.judgement): read back from the database, checked, never trusted. */
export const JudgementSchema = z.strictObject({
  quorum: quorumSchema,
  failAfter: runs,
  confirmAfter: runs,
  flapWindowMs: z.number().int().min(1_000).max(MAX_MS),
  recheckMs: z.number().int().min(MIN_RECHECK_MS).max(MAX_MS),
  disagreementAfterMs: z.number().int().min(0).max(MAX_MS),
  slo: z.number().min(50).max(99.999),
});

/** A stored judgement (jsonb, or null for a server from before judgements): the defaults for anything unreadable. */
export function storedJudgement(value: unknown): Judgement {
  const parsed = JudgementSchema.safeParse(value);
  return parsed.success ? parsed.data : { ...DEFAULT_JUDGEMENT };
}

/**
 * How many of `total` regions make a quorum: any → 1, all → every one, half → at least half
 * (⌈total/2⌉), N → N but never more than there are. 0 regions make no quorum (0: nothing is judged).
 */
export function quorumNeeded(quorum: Quorum, total: number): number {
  if (total <= 0) return 0;
  if (quorum === 'any') return 1;
  if (quorum === 'all') return total;
  if (quorum === 'half') return Math.ceil(total / 2);
  return Math.min(quorum, total);
}

/**
 * Regions that must see one era move to confirm it without waiting for confirmAfter runs: a quorum,
 * and never fewer than two (with two regions, half is one: one region alone is what confirmAfter waits on).
 */
export function confirmingRegions(quorum: Quorum, total: number): number {
  return Math.max(2, quorumNeeded(quorum, total));
}

// Applying a fleet definition declaratively: servers and tests the file names are created or
// changed to match, file-managed ones it no longer names are retired (history stays), nothing is
// ever duplicated. Servers created through the API are not the file's to retire. A server keeps
// its identity by name: one retired and named again is revived (same id, its tests by their key),
// so its history is not split. A dry run is this same code in a transaction that is rolled back,
// so the plan an operator confirms is what applying does; `expectPlan` makes the apply refuse
// (rolled back too) when the fleet moved since that plan was shown.
import { createHash } from 'node:crypto';
import {
  type FleetDefinition,
  formatDuration,
  type Judgement,
  judgementFileForm,
  type ServerDefinition,
  scriptKey,
  type TestDefinition,
  testKey,
} from '@mcp-fleet/config';
import { maskUrl, type Script } from '@mcp-fleet/probe';
import {
  createServer,
  createTest,
  type Db,
  getServer,
  lastRetiredServer,
  lastRetiredTest,
  listActiveServers,
  listActiveTests,
  lockFleetApply,
  retireServer,
  retireTest,
  reviveServer,
  reviveTest,
  type Server,
  setServerCredential,
  stdioCommandsByRegion,
  updateServer,
  updateTest,
} from '@mcp-fleet/store';
import { stdioCommandRefusal } from './stdio-allowed';

export interface ApplySummary {
  /** Nothing was written: this is what applying would do. */
  dryRun: boolean;
  created: string[];
  /** Retired servers the fleet names again, back under their own id and history. */
  revived: string[];
  updated: string[];
  retired: string[];
  unchanged: string[];
  testsCreated: number;
  testsRetired: number;
  /** Per created, revived or updated server: what changes, in words (never a credential's value). */
  changes: Record<string, string[]>;
  /** Names this plan: an apply given it back (`expectPlan`) refuses if it would do anything else. */
  plan: string;
  /**
   * Per server, what the operator should know that does not stop the apply: a stdio command no live
   * agent of its regions allows yet (stdio-allowed.ts: a file warns, the API refuses). Not part of
   * the plan: agents coming up between a dry run and its apply change no plan.
   */
  warnings: Record<string, string[]>;
}

export interface ApplyOptions {
  dryRun?: boolean;
  /** The `plan` of the dry run the operator confirmed. */
  expectPlan?: string;
  /** Stdio commands per region of agents about to start with this control (ControlOptions.agentsStarting). */
  agentsStarting?: Readonly<Record<string, readonly string[]>>;
}

/** The apply would not do what the confirmed plan said: nothing was written. */
export class PlanChangedError extends Error {
  constructor(readonly summary: ApplySummary) {
    super('the fleet changed since the plan was made, so nothing was applied: look at the new plan and apply again');
  }
}

/** Thrown inside the transaction to roll a dry run back with its summary. */
class RolledBack extends Error {
  constructor(readonly summary: ApplySummary) {
    super('dry run');
  }
}

export async function applyFleet(db: Db, fleet: FleetDefinition, opts: ApplyOptions = {}): Promise<ApplySummary> {
  try {
    return await db.transaction(async (tx) => {
      // Controls applying at once (replicas started with one file) take turns: each reads what the last wrote.
      await lockFleetApply(tx);
      const summary = { ...(await write(tx, fleet)), warnings: await stdioWarnings(tx, fleet, opts.agentsStarting) };
      if (opts.dryRun) throw new RolledBack({ ...summary, dryRun: true });
      if (opts.expectPlan !== undefined && opts.expectPlan !== summary.plan) throw new PlanChangedError(summary);
      return summary;
    });
  } catch (err) {
    if (err instanceof RolledBack) return err.summary;
    throw err;
  }
}

/** Each stdio server of the fleet whose command no live (or starting) agent of its regions allows, said why. */
async function stdioWarnings(
  tx: Db,
  fleet: FleetDefinition,
  starting: Readonly<Record<string, readonly string[]>> = {},
): Promise<Record<string, string[]>> {
  const stdio = fleet.servers.filter((def) => def.command);
  if (!stdio.length) return {};
  const byRegion: Record<string, readonly string[]> = { ...(await stdioCommandsByRegion(tx)) };
  for (const [region, commands] of Object.entries(starting))
    byRegion[region] = [...(byRegion[region] ?? []), ...commands];
  const out: Record<string, string[]> = {};
  for (const def of stdio) {
    const refusal = stdioCommandRefusal(byRegion, def.command!.command, def.regions ?? fleet.regions);
    if (refusal) out[def.name] = [`not probed until an agent allows its command: ${refusal}`];
  }
  return out;
}

async function write(tx: Db, fleet: FleetDefinition): Promise<Omit<ApplySummary, 'warnings'>> {
  const s: Omit<ApplySummary, 'plan' | 'warnings'> = {
    dryRun: false,
    created: [],
    revived: [],
    updated: [],
    retired: [],
    unchanged: [],
    testsCreated: 0,
    testsRetired: 0,
    changes: {},
  };
  const active = new Map((await listActiveServers(tx)).map((srv) => [srv.name, srv]));
  for (const def of fleet.servers) {
    const existing = active.get(def.name);
    active.delete(def.name);
    if (existing) {
      const what = changesOf(existing, def);
      if (what.length) {
        await updateServer(tx, existing.id, { ...fields(def), source: 'file' });
        // The file's headers are now the server's: a named credential they came from no longer is.
        if (what.some((w) => w.startsWith('headers'))) await setServerCredential(tx, existing.id, null);
      }
      const tests = await listActiveTests(tx, existing.id);
      const wanted = new Set(def.tests.map(testKey));
      const byKey = new Map(def.tests.map((t) => [testKey(t), t]));
      for (const t of tests) {
        const key = testKey(t);
        if (wanted.delete(key)) {
          // The same test (revision and depth): only its own interval may have changed.
          const want = byKey.get(key)!.intervalMs;
          if (t.testIntervalMs !== want) {
            await updateTest(tx, t.testId, { intervalMs: want });
            what.push(`test ${testName(t)} interval ${every(t.testIntervalMs)} → ${every(want)}`);
          }
          continue;
        }
        await retireTest(tx, t.testId);
        s.testsRetired += 1;
        what.push(`test ${testName(t)} retired`);
      }
      for (const t of def.tests.filter((t) => wanted.has(testKey(t)))) what.push(await addTest(tx, existing.id, t));
      s.testsCreated += def.tests.filter((t) => wanted.has(testKey(t))).length;
      if (what.length) s.changes[def.name] = what;
      (what.length ? s.updated : s.unchanged).push(def.name);
      continue;
    }
    const retired = await lastRetiredServer(tx, def.name);
    // What the revival changes, said as for a live server (unless its old credentials cannot be unsealed).
    const old = retired ? await getServer(tx, retired.id).catch(() => null) : null;
    const server = retired
      ? await reviveServer(tx, retired.id, { ...fields(def), source: 'file' })
      : await createServer(tx, { ...fields(def), source: 'file' });
    if (!server) throw new Error(`server ${def.name} could not be revived`);
    const what = retired
      ? [
          `revived (retired ${retired.retiredAt.toISOString()}): same id, history kept`,
          ...(old ? changesOf(old, def) : []),
        ]
      : [];
    for (const t of def.tests) what.push(await addTest(tx, server.id, t));
    s.testsCreated += def.tests.length;
    s.changes[def.name] = what;
    (retired ? s.revived : s.created).push(def.name);
  }
  for (const server of active.values()) {
    if (server.source !== 'file') continue;
    await retireServer(tx, server.id);
    s.retired.push(server.name);
  }
  return { ...s, plan: planId(s) };
}

/** A test by its key: the one of that key retired last comes back (its history), else a new one. */
async function addTest(tx: Db, serverId: string, t: TestDefinition): Promise<string> {
  const before = await lastRetiredTest(tx, serverId, t.mode, t.pinnedRevision, t.depth, t.script);
  if (before) {
    await reviveTest(tx, before.id);
    if (before.intervalMs !== t.intervalMs) await updateTest(tx, before.id, { intervalMs: t.intervalMs });
    return `test ${testName(t)} revived`;
  }
  await createTest(tx, { serverId, ...t });
  return `test ${testName(t)} added`;
}

function fields(def: ServerDefinition) {
  return {
    name: def.name,
    url: def.url,
    headers: def.headers,
    command: def.command,
    regions: def.regions,
    intervalMs: def.intervalMs,
    timeoutMs: def.timeoutMs,
    detectionIntervalMs: def.detectionIntervalMs,
    judgement: def.judgement,
  };
}

/** What applying `def` changes on the stored server, in words; credentials only as "changed". */
function changesOf(s: Server, def: ServerDefinition): string[] {
  const out: string[] = [];
  // The whole URL: `url` is its display form, credentials masked.
  if (s.target !== def.url)
    out.push(s.url === maskUrl(def.url) ? 'url credentials changed' : `url ${s.url} → ${maskUrl(def.url)}`);
  if (!sameHeaders(s.headers, def.headers)) out.push('headers changed');
  // A stdio server's command line shows in `url`; its env (secrets) and cwd only as "changed".
  if (!sameHeaders(s.command?.env ?? {}, def.command?.env ?? {})) out.push('env changed');
  if ((s.command?.cwd ?? null) !== (def.command?.cwd ?? null)) out.push('cwd changed');
  const regions = (r: string[] | null) => (r ? r.join(', ') : 'all');
  if (JSON.stringify(s.regions) !== JSON.stringify(def.regions))
    out.push(`regions ${regions(s.regions)} → ${regions(def.regions)}`);
  if (s.intervalMs !== def.intervalMs)
    out.push(`interval ${formatDuration(s.intervalMs)} → ${formatDuration(def.intervalMs)}`);
  if (s.timeoutMs !== def.timeoutMs)
    out.push(`timeout ${formatDuration(s.timeoutMs)} → ${formatDuration(def.timeoutMs)}`);
  const detection = (ms: number | null) => (ms === null ? 'off' : `every ${formatDuration(ms)}`);
  if (s.detectionIntervalMs !== def.detectionIntervalMs)
    out.push(`detection ${detection(s.detectionIntervalMs)} → ${detection(def.detectionIntervalMs)}`);
  // A changed judgement is a change: re-applying the file brings the stored one up to it.
  out.push(...judgementChanges(s.judgement, def.judgement));
  if (s.source !== 'file') out.push('now defined by the fleet file (it was created through the API)');
  return out;
}

/** Each judgement key that differs, in the file's words (`quorum half → all`, `recheck 24h → 1h`). */
function judgementChanges(from: Judgement, to: Judgement): string[] {
  const a = judgementFileForm(from);
  const b = judgementFileForm(to);
  return (Object.keys(b) as (keyof typeof b)[]).filter((k) => a[k] !== b[k]).map((k) => `${k} ${a[k]} → ${b[k]}`);
}

/** jsonb keeps keys in its own order: compare header sets, not strings. */
function sameHeaders(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

function testName(t: { mode: string; pinnedRevision: string | null; depth: string; script?: unknown }): string {
  const name = t.mode === 'newest' ? 'newest' : `pinned ${t.pinnedRevision}`;
  if (t.depth === 'script' && t.script) return `${name} (script ${scriptKey(t.script as Script)})`;
  return t.depth === 'handshake' ? name : `${name} (${t.depth})`;
}

/** A test's own interval in words; null is its depth's default. */
function every(ms: number | null): string {
  return ms === null ? 'default' : formatDuration(ms);
}

/** Names a plan by what it does (not by when): equal plans, equal names. */
function planId(s: Omit<ApplySummary, 'plan' | 'dryRun' | 'warnings'> & { dryRun?: boolean }): string {
  const { dryRun: _, ...what } = s;
  return createHash('sha256').update(JSON.stringify(what)).digest('hex').slice(0, 16);
}

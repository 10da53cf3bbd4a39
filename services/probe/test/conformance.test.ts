// Conformance runs against the official SDK servers of fleet-sim, in both eras, and against the
// hostile ones: the checks an era is judged by, what each SDK really passes, and the bounds.
import { HOSTILE_TARGET_NAMES, SIM_BEARER_TOKEN } from '@mcp-fleet/fleet-sim';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  type CheckResult,
  CONFORMANCE_MAX_REQUESTS,
  type ConformanceRun,
  checksFor,
  conformance,
  type Exchange,
} from '../src';
import { useSim } from './use-sim';

const fleet = useSim();
const url = (name: string) => fleet().target(name).url;

const NUL = String.fromCharCode(0);
const hasNul = (v: unknown): boolean =>
  typeof v === 'string' ? v.includes(NUL) : v !== null && typeof v === 'object' && Object.values(v).some(hasNul);
const statuses = (run: ConformanceRun) => Object.fromEntries(run.checks.map((c) => [c.id, c.status]));
const notPassed = (run: ConformanceRun) =>
  Object.fromEntries(run.checks.filter((c) => c.status !== 'pass').map((c) => [c.id, c.status]));

describe('a modern connection (2026-07-28)', () => {
  it('SDK 2.4 passes every rule it can be judged by; the two it cannot are skipped with the reason', async () => {
    const run = await conformance(url('modern'));
    expect(run.protocol).toEqual({ requested: 'auto', negotiated: '2026-07-28', era: 'modern' });
    expect(run.outcome).toBe('success');
    expect(run.pass).toBe(true);
    expect(run.checks.map((c) => c.id)).toEqual(checksFor('modern').map((c) => c.id));
    expect(notPassed(run)).toEqual({
      cache_scope_consistent_across_pages: 'skip',
      resource_not_found_error: 'skip',
    });
    const skipped = run.checks.filter((c) => c.status === 'skip').map((c) => c.message);
    expect(skipped).toEqual(['no list returned a nextCursor', 'the server declares no resources capability']);
    expect(run.serverInfo).toEqual({ name: 'modern', version: '2.4.0' });
    // Every request the server saw is counted, within the budget.
    expect(fleet().requests('modern').length).toBe(run.requests);
    expect(run.requests).toBeLessThanOrEqual(CONFORMANCE_MAX_REQUESTS);
  });

  it('one span per check: onCheck sees each check once, in the table order', async () => {
    const seen: CheckResult[] = [];
    const run = await conformance(url('modern-only'), { onCheck: (c) => seen.push(c) });
    expect(seen.map((c) => c.id).sort()).toEqual(run.checks.map((c) => c.id).sort());
    expect(seen.reduce((n, c) => n + c.requests, 0)).toBeLessThanOrEqual(run.requests);
  });

  it('the tool set is compared over a second TCP connection', async () => {
    // A dispatcher of its own, so no socket from an earlier test is reused uncounted.
    const dispatcher = new Agent();
    const run = await conformance(url('modern-only'), { dispatcher });
    await dispatcher.close();
    expect(run.checks.find((c) => c.id === 'tools_list_stable_across_connections')?.status).toBe('pass');
    expect(fleet().connections('modern-only')).toBeGreaterThanOrEqual(2);
  });
});

describe('a legacy connection', () => {
  it('sessions (SDK 1.x): passes; its two wrong error codes are warnings, as seed 002 words them', async () => {
    const run = await conformance(url('sessions-2025-11-25'));
    expect(run.protocol).toEqual({ requested: 'auto', negotiated: '2025-11-25', era: 'legacy' });
    expect(run.checks.map((c) => c.id)).toEqual(checksFor('legacy').map((c) => c.id));
    expect(run.pass).toBe(true);
    expect(notPassed(run)).toEqual({
      list_resources_succeeds: 'skip',
      list_prompts_succeeds: 'skip',
      missing_jsonrpc_invalid_request: 'fail',
      invalid_params_error: 'fail',
    });
    const warning = run.checks.find((c) => c.id === 'missing_jsonrpc_invalid_request')!;
    expect(warning.level).toBe('SHOULD');
    expect(warning.message).toContain('-32700');
    expect(warning.evidence?.status).toBe(400);
  });

  it('--protocol legacy on a both-eras SDK 2.4 server: a stateless legacy side answers before initialize (a warning)', async () => {
    const run = await conformance(url('modern'), { protocol: 'legacy' });
    expect(run.protocol.era).toBe('legacy');
    expect(run.pass).toBe(true);
    expect(statuses(run).request_before_initialize_rejected).toBe('fail');
    expect(statuses(run).server_info_present).toBe('pass');
  });

  it('HTTP+SSE (2024-11-05): requests go to the endpoint, answers come on the stream', async () => {
    const run = await conformance(url('legacy-sse'));
    expect(run.protocol).toEqual({ requested: 'auto', negotiated: '2024-11-05', era: 'legacy' });
    const before = run.checks.find((c) => c.id === 'request_before_initialize_rejected')!;
    expect(before.status).toBe('skip');
    expect(run.pass).toBe(true);
    // SDK 1.9's SSE transport turns bad JSON away with a bare HTTP 400, and bad params are -32603.
    expect(notPassed(run)).toEqual({
      list_resources_succeeds: 'skip',
      list_prompts_succeeds: 'skip',
      request_before_initialize_rejected: 'skip',
      list_changed_consistent: 'skip',
      malformed_json_parse_error: 'fail',
      missing_jsonrpc_invalid_request: 'fail',
      invalid_params_error: 'fail',
    });
  });

  it('a pinned revision the server does not speak is not a connection', async () => {
    const run = await conformance(url('sessions-2025-11-25'), { protocol: '2026-07-28' });
    expect(run.pass).toBe(false);
    expect(run.checks).toEqual([]);
    expect(run.protocol.negotiated).toBeNull();
  });
});

describe('raw probes', () => {
  it('--no-probe: every raw check is skipped with the reason, and no deliberate request is sent', async () => {
    const exchanges: Exchange[] = [];
    const run = await conformance(url('modern'), { probe: false, onExchange: (e) => exchanges.push(e) });
    const raw = run.checks.filter((c) => checksFor('modern').find((d) => d.id === c.id && 'raw' in d));
    expect(raw.length).toBeGreaterThan(5);
    for (const c of raw) {
      expect(c.status).toBe('skip');
      expect(c.message).toContain('--no-probe');
    }
    expect(exchanges.filter((e) => e.jsonRpcMethod === 'mcp_fleet/no_such_method')).toEqual([]);
  });

  it('every bad request is marked deliberate, so metrics never count it against the server', async () => {
    const exchanges: Exchange[] = [];
    await conformance(url('modern'), { onExchange: (e) => exchanges.push(e) });
    const unknown = exchanges.filter((e) => e.jsonRpcMethod === 'mcp_fleet/no_such_method');
    expect(unknown.length).toBeGreaterThan(0);
    expect(unknown.every((e) => e.deliberate)).toBe(true);
    // Valid requests are never marked.
    expect(exchanges.filter((e) => e.jsonRpcMethod === 'server/discover' && !e.deliberate).length).toBeGreaterThan(0);
  });
});

describe('no connection', () => {
  it('a closed port: no checks, not passing, told by its cause', async () => {
    const run = await conformance(url('closed'));
    expect(run).toMatchObject({ pass: false, checks: [], outcome: 'unreachable' });
    expect(run.message).toMatch(/^unreachable: /);
    expect(run.evidence?.reachabilityFailure).toBe('connection_refused');
  });

  it('a 401: the credential sent never appears in what the run reports (the server echoes it)', async () => {
    const run = await conformance(url('bearer'), { headers: { Authorization: 'Bearer wrong-s3cret-value' } });
    expect(run.pass).toBe(false);
    expect(run.outcome).toBe('auth_required');
    expect(JSON.stringify(run)).not.toContain('wrong-s3cret-value');
  });

  it('with the right credential: the checks run, and the token stays out of every message and evidence', async () => {
    const run = await conformance(url('bearer'), { headers: { Authorization: `Bearer ${SIM_BEARER_TOKEN}` } });
    expect(run.outcome).toBe('success');
    expect(run.checks.length).toBeGreaterThan(10);
    expect(JSON.stringify(run)).not.toContain(SIM_BEARER_TOKEN);
  });
});

describe('hostile servers', () => {
  // Boundary: whatever a server answers, a run ends within its budget, its words bounded and storable.
  it('every hostile target ends in a bounded run', async () => {
    const runs = await Promise.all(
      HOSTILE_TARGET_NAMES.map(async (name) => [name, await conformance(url(name), { timeoutMs: 1_500 })] as const),
    );
    for (const [name, run] of runs) {
      expect(run.requests, name).toBeLessThanOrEqual(CONFORMANCE_MAX_REQUESTS);
      expect(JSON.stringify(run).length, name).toBeLessThan(120_000);
      for (const c of run.checks) expect(c.message.length, `${name} ${c.id}`).toBeLessThanOrEqual(300);
      // storable(): Postgres refuses a NUL in text and jsonb.
      expect(hasNul(run), name).toBe(false);
    }
  }, 120_000);
});

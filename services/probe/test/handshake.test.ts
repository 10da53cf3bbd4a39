// Handshake runs against real SDK servers of every generation, newest supported and pinned.
import { describe, expect, it } from 'vitest';
import { handshake } from '../src';
import { useSim } from './use-sim';

const fleet = useSim();

const url = (name: string) => fleet().target(name).url;
const served = (name: string) => fleet().requests(name);

describe('HTTP+SSE transport (2024-11-05)', () => {
  it('pinned: GET the stream, POST initialize and notifications/initialized to the endpoint', async () => {
    const run = await handshake(url('legacy-sse'), { revision: '2024-11-05' });
    expect(run).toMatchObject({
      mode: 'pinned',
      requested: '2024-11-05',
      negotiated: '2024-11-05',
      generation: 'HTTP+SSE transport',
      era: 'legacy',
      outcome: 'success',
      assertion: null,
      previousRevision: null,
      serverInfo: { name: 'legacy-sse', version: '1.9.0' },
    });
    expect(run.requests).toBe(3);
    const seen = served('legacy-sse');
    expect(seen.map((r) => `${r.method} ${r.jsonRpcMethod ?? ''}`.trim())).toEqual([
      'GET',
      'POST initialize',
      'POST notifications/initialized',
    ]);
    expect(seen[1]?.path).toMatch(/^\/messages/);
  });

  it('newest with no current revision looks it up first (at most 4 requests), then speaks it', async () => {
    const run = await handshake(url('legacy-sse'), { revision: 'newest' });
    expect(run.outcome).toBe('success');
    expect(run.negotiated).toBe('2024-11-05');
    expect(run.lookup).toEqual({ performed: true, found: '2024-11-05', requests: 3 });
    expect(served('legacy-sse').length).toBe(run.requests);
  });
});

describe('sessions (2025-03-26, 2025-06-18, 2025-11-25)', () => {
  it('pinned on a stateful server: initialize, notifications/initialized, DELETE of the minted session', async () => {
    const run = await handshake(url('sessions-2025-11-25'), { revision: '2025-11-25' });
    expect(run).toMatchObject({ outcome: 'success', negotiated: '2025-11-25', generation: 'sessions', requests: 3 });
    const seen = served('sessions-2025-11-25');
    expect(seen.map((r) => r.method)).toEqual(['POST', 'POST', 'DELETE']);
    expect(seen[0]?.sessionId).toBeUndefined();
    expect(seen[1]?.sessionId).toBeDefined();
    expect(seen[2]?.sessionId).toBe(seen[1]?.sessionId);
    // MCP-Protocol-Version is sent on every request after initialize at 2025-11-25, never on initialize.
    expect(seen.map((r) => r.protocolVersionHeader)).toEqual([undefined, '2025-11-25', '2025-11-25']);
    expect(seen.some((r) => r.method === 'GET')).toBe(false);
  });

  it('2025-03-26 never sends MCP-Protocol-Version', async () => {
    const run = await handshake(url('sessions-2025-03-26'), { revision: '2025-03-26' });
    expect(run).toMatchObject({ outcome: 'success', negotiated: '2025-03-26' });
    expect(served('sessions-2025-03-26').every((r) => r.protocolVersionHeader === undefined)).toBe(true);
  });

  it('reads a JSON answer from a stateless server and sends no DELETE when no session was minted', async () => {
    const run = await handshake(url('sessions-2025-06-18'), { revision: '2025-06-18' });
    expect(run).toMatchObject({ outcome: 'success', negotiated: '2025-06-18', requests: 2 });
    expect(served('sessions-2025-06-18').map((r) => r.method)).toEqual(['POST', 'POST']);
  });

  it('a pin the server answers with another revision fails mcp.protocol.revision', async () => {
    const run = await handshake(url('sessions-2025-03-26'), { revision: '2025-06-18' });
    expect(run.outcome).toBe('unsupported_version');
    // Never spoken before (a first run, a pin saved just now): "does not", not "no longer" (issue 13 point 11).
    expect(run.message).toBe('Server does not speak protocol 2025-06-18');
    expect(run.assertion).toEqual({
      name: 'mcp.protocol.revision',
      expected: '2025-06-18',
      actual: '2025-03-26',
      message: 'Server does not speak protocol 2025-06-18',
    });
    // The test spoke its pin last time: now the server no longer does.
    const lost = await handshake(url('sessions-2025-03-26'), { revision: '2025-06-18', current: '2025-06-18' });
    expect(lost.assertion).toMatchObject({ message: 'Server no longer speaks protocol 2025-06-18' });
    expect(lost.message).toBe('Server no longer speaks protocol 2025-06-18');
    // Another revision spoken last time says nothing of this one.
    const other = await handshake(url('sessions-2025-03-26'), { revision: '2025-06-18', current: '2025-03-26' });
    expect(other.message).toBe('Server does not speak protocol 2025-06-18');
    expect(run.lookup.performed).toBe(false);
  });

  it('newest supported adopts the revision the server answered with: a downgrade, now X was Y', async () => {
    const run = await handshake(url('sessions-2025-03-26'), { revision: 'newest', current: '2025-06-18' });
    expect(run).toMatchObject({
      mode: 'newest',
      requested: '2025-06-18',
      negotiated: '2025-03-26',
      outcome: 'downgrade',
      previousRevision: '2025-06-18',
      assertion: null,
    });
    expect(run.message).toMatch(/^now 2025-03-26, was 2025-06-18/);
  });

  it('newest supported that keeps its revision is a plain success with no previous revision', async () => {
    const run = await handshake(url('sessions-2025-11-25'), { revision: 'newest', current: '2025-11-25' });
    expect(run).toMatchObject({ outcome: 'success', negotiated: '2025-11-25', previousRevision: null });
    expect(run.lookup.performed).toBe(false);
  });
});

describe('stateless (2026-07-28)', () => {
  it('pinned: one server/discover with the _meta envelope and both headers', async () => {
    const run = await handshake(url('modern'), { revision: '2026-07-28' });
    expect(run).toMatchObject({
      outcome: 'success',
      negotiated: '2026-07-28',
      generation: 'stateless',
      era: 'modern',
      requests: 1,
      serverInfo: { name: 'modern', version: '2.4.0' },
    });
    const [req] = served('modern');
    expect(req).toMatchObject({
      method: 'POST',
      jsonRpcMethod: 'server/discover',
      mcpMethod: 'server/discover',
      protocolVersionHeader: '2026-07-28',
    });
    expect(req?.sessionId).toBeUndefined();
  });

  it('newest supported with no current revision finds 2026-07-28 by lookup and speaks it', async () => {
    const run = await handshake(url('modern'), { revision: 'newest' });
    expect(run).toMatchObject({ outcome: 'success', negotiated: '2026-07-28', requests: 2 });
    expect(run.lookup).toEqual({ performed: true, found: '2026-07-28', requests: 1 });
  });
});

describe('moves between generations', () => {
  it('a sessions revision turned away with -32022 is an era signal: newest moves to 2026-07-28', async () => {
    const run = await handshake(url('modern-only'), { revision: 'newest', current: '2025-11-25' });
    expect(run).toMatchObject({
      outcome: 'success',
      requested: '2025-11-25',
      negotiated: '2026-07-28',
      era: 'modern',
      previousRevision: '2025-11-25',
      message: 'now 2026-07-28, was 2025-11-25',
    });
    expect(run.lookup).toEqual({ performed: true, found: '2026-07-28', requests: 1 });
  });

  it('a pinned sessions revision on a modern-only server fails with the revision it offers instead', async () => {
    const run = await handshake(url('modern-only'), { revision: '2025-03-26' });
    expect(run.outcome).toBe('unsupported_version');
    expect(run.assertion).toMatchObject({
      name: 'mcp.protocol.revision',
      expected: '2025-03-26',
      actual: '2026-07-28',
    });
    expect(run.evidence).toMatchObject({ status: 400, jsonRpcErrorCode: -32022 });
  });

  it('a stateless revision on a legacy server is an era signal: newest falls back, a downgrade', async () => {
    const run = await handshake(url('sessions-2025-11-25'), { revision: 'newest', current: '2026-07-28' });
    expect(run).toMatchObject({
      outcome: 'downgrade',
      requested: '2026-07-28',
      negotiated: '2025-11-25',
      previousRevision: '2026-07-28',
      era: 'legacy',
    });
    expect(run.lookup.found).toBe('2025-11-25');
    expect(run.lookup.requests).toBeLessThanOrEqual(4);
  });

  it('a pinned 2026-07-28 on a legacy server fails with the revision found by the lookup', async () => {
    const run = await handshake(url('sessions-2025-03-26'), { revision: '2026-07-28' });
    expect(run.assertion).toMatchObject({ expected: '2026-07-28', actual: '2025-03-26' });
    expect(run.message).toBe('Server does not speak protocol 2026-07-28');
  });

  it('scripted drift: the same test sees the server move and reports it once', async () => {
    fleet().drift('drifter', ['2025-06-18', '2025-11-25']);
    const before = await handshake(url('drifter'), { revision: 'newest', current: '2025-11-25' });
    expect(before).toMatchObject({ outcome: 'success', negotiated: '2025-11-25', previousRevision: null });
    fleet().drift('drifter', ['2026-07-28']);
    const after = await handshake(url('drifter'), { revision: 'newest', current: '2025-11-25' });
    expect(after).toMatchObject({ negotiated: '2026-07-28', previousRevision: '2025-11-25', outcome: 'success' });
    const again = await handshake(url('drifter'), { revision: 'newest', current: '2026-07-28' });
    expect(again).toMatchObject({ negotiated: '2026-07-28', previousRevision: null, lookup: { performed: false } });
    fleet().drift('drifter', ['2025-06-18', '2025-11-25']);
  });
});

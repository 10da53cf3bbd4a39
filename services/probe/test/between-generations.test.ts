// Servers between generations (docs/protocol.md#servers-between-generations): a real SDK 1.10.2
// server (fleet-sim's between-generations) answers a sessions `initialize` with 2024-11-05 and has
// no HTTP+SSE endpoint. Detection reports 2024-11-05 supported over Streamable HTTP; newest-supported
// and pinned 2024-11-05 runs pass over the sessions opening. And every failed run names its assertion.
import { describe, expect, it } from 'vitest';
import { BOUNDS, conformance, detect, handshake, readSurfaceAt, runScript } from '../src';
import { useSim } from './use-sim';

const fleet = useSim({ only: ['between-generations', 'legacy-sse', 'sessions-2025-11-25', 'unavailable', 'website'] });
const url = (name: string) => fleet().target(name).url;
const served = (name: string) =>
  fleet()
    .requests(name)
    .map((r) => `${r.method} ${r.jsonRpcMethod ?? ''}`.trim());

const SERVER_INFO = { name: 'between-generations', version: '1.10.2' };

describe('a server between generations (SDK 1.10.2: 2024-11-05 over Streamable HTTP)', () => {
  it('detection: 2024-11-05 supported, its note naming the transport; the sessions rows answered 2024-11-05', async () => {
    const d = await detect(url('between-generations'));
    expect(d).toMatchObject({ outcome: 'DETECTED', newestSupported: '2024-11-05', serverInfo: SERVER_INFO });
    const [legacy, ...rest] = d.revisions;
    expect(legacy).toEqual({
      revision: '2024-11-05',
      generation: 'HTTP+SSE transport',
      supported: true,
      note: 'deprecated; spoken over Streamable HTTP (the sessions opening)',
      sentence:
        '2024-11-05 (HTTP+SSE transport): supported over Streamable HTTP (the sessions opening); the server has no HTTP+SSE endpoint. This revision is deprecated and eligible for removal.',
      serverInfo: SERVER_INFO,
    });
    expect(legacy?.note.length).toBeLessThanOrEqual(BOUNDS.label);
    expect(rest.map((r) => [r.revision, r.supported])).toEqual([
      ['2025-03-26', false],
      ['2025-06-18', false],
      ['2025-11-25', false],
      ['2026-07-28', false],
    ]);
    expect(rest[0]?.sentence).toBe('2025-03-26 (sessions): not supported (the server answered with 2024-11-05).');
    expect(d.requests).toBeLessThanOrEqual(8);
  });

  it('newest supported: the lookup hears 2024-11-05 over sessions, and the run speaks it there', async () => {
    const run = await handshake(url('between-generations'), { revision: 'newest' });
    expect(run).toMatchObject({
      mode: 'newest',
      requested: '2024-11-05',
      negotiated: '2024-11-05',
      generation: 'sessions',
      era: 'legacy',
      outcome: 'success',
      assertion: null,
      serverInfo: SERVER_INFO,
      lookup: { performed: true, found: '2024-11-05' },
    });
    expect(run.message).toBe('The handshake succeeded; 2024-11-05 spoken over Streamable HTTP (the sessions opening)');
    // No HTTP+SSE GET: discover, the lookup's initialize (and its DELETE), then the sessions opening.
    expect(served('between-generations')).toEqual([
      'POST server/discover',
      'POST initialize',
      'DELETE',
      'POST initialize',
      'POST notifications/initialized',
      'DELETE',
    ]);
  });

  it('newest supported, current 2024-11-05: the GET finds no stream (an era signal), the lookup leads to sessions', async () => {
    const run = await handshake(url('between-generations'), { revision: 'newest', current: '2024-11-05' });
    expect(run).toMatchObject({ outcome: 'success', negotiated: '2024-11-05', generation: 'sessions' });
    expect(run.previousRevision).toBeNull();
    expect(run.requests).toBeLessThanOrEqual(10);
  });

  it('pinned 2024-11-05 passes over the sessions opening', async () => {
    const run = await handshake(url('between-generations'), { revision: '2024-11-05' });
    expect(run).toMatchObject({
      mode: 'pinned',
      requested: '2024-11-05',
      negotiated: '2024-11-05',
      generation: 'sessions',
      era: 'legacy',
      outcome: 'success',
      assertion: null,
      serverInfo: SERVER_INFO,
    });
    expect(served('between-generations').slice(-3)).toEqual([
      'POST initialize',
      'POST notifications/initialized',
      'DELETE',
    ]);
  });

  it('pinned 2025-11-25 fails mcp.protocol.revision: the server offers 2024-11-05 instead', async () => {
    const run = await handshake(url('between-generations'), { revision: '2025-11-25' });
    expect(run.outcome).toBe('unsupported_version');
    expect(run.assertion).toMatchObject({
      name: 'mcp.protocol.revision',
      expected: '2025-11-25',
      actual: '2024-11-05',
    });
  });

  it('other servers keep their openings: pinned 2024-11-05 on an HTTP+SSE server, and on a sessions server', async () => {
    const sse = await handshake(url('legacy-sse'), { revision: '2024-11-05' });
    expect(sse).toMatchObject({
      outcome: 'success',
      generation: 'HTTP+SSE transport',
      message: 'The handshake succeeded.',
    });
    const d = await detect(url('sessions-2025-11-25'));
    expect(d.revisions[0]?.note).toBe('deprecated, eligible for removal');
  });
});

describe('every failed run names the assertion it failed', () => {
  it('a pinned sessions run against an HTTP+SSE-only server fails mcp.initialize', async () => {
    const run = await handshake(url('legacy-sse'), { revision: '2025-11-25' });
    expect(run.outcome).not.toBe('success');
    expect(run.assertion).toEqual({
      name: 'mcp.initialize',
      expected: '2025-11-25',
      actual: run.outcome,
      message: run.message,
    });
  });

  it.each([
    ['unavailable', '2025-06-18'],
    ['unavailable', 'newest'],
    ['website', '2026-07-28'],
    ['website', 'newest'],
  ] as const)('%s, %s', async (name, revision) => {
    const run = await handshake(url(name), { revision });
    expect(run.outcome).not.toMatch(/^(success|downgrade)$/);
    expect(run.assertion?.name).toMatch(/^mcp\.(initialize|protocol\.revision)$/);
    expect(run.assertion?.expected).toBe(revision === 'newest' ? 'an MCP server' : revision);
    expect(run.assertion?.actual).toBeTruthy();
    expect(run.assertion?.message).toBeTruthy();
  });

  it('conformance, surface and script runs at 2024-11-05 reach it over the sessions opening too', async () => {
    const run = await conformance(url('between-generations'), { protocol: '2024-11-05' });
    expect(run.protocol).toMatchObject({ requested: '2024-11-05', negotiated: '2024-11-05', era: 'legacy' });
    expect(run.outcome).toBe('success');
    expect(run.checks.find((c) => c.id === 'list_tools_succeeds')?.status).toBe('pass');

    const read = await readSurfaceAt(url('between-generations'), '2024-11-05');
    expect(read).toMatchObject({ era: 'legacy', revision: '2024-11-05' });
    expect(read.snapshot?.body).toContain('"name":"echo"');

    const script = await runScript(url('between-generations'), {
      protocol: '2024-11-05',
      script: {
        steps: [
          {
            method: 'tools/call',
            params: { name: 'echo', arguments: { text: 'between' } },
            expect: [{ path: '$.content[0].text', equals: 'between' }],
          },
        ],
        allowWrites: true,
      },
    });
    expect(script.outcome).toBe('success');
    expect(script.steps[0]?.status).toBe('pass');
  });

  it('an HTTP+SSE-only server still opens 2024-11-05 over its stream at every depth (no sessions fallback needed)', async () => {
    const run = await conformance(url('legacy-sse'), { protocol: '2024-11-05' });
    expect(run.protocol.negotiated).toBe('2024-11-05');
    expect(
      fleet()
        .requests('legacy-sse')
        .some((r) => r.method === 'GET'),
    ).toBe(true);
  });
});

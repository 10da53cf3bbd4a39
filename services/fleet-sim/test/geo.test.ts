// The geo target answers by the caller's address (issue 17, item 7): two callers on one machine,
// from 127.0.0.1 and 127.0.0.2 (the whole of 127.0.0.0/8 is loopback on Linux), see two faces of
// one server, as two regions see a rollout behind geo-DNS. Real SDK servers, real probe runs.
import { request } from 'node:http';
import { guardedDispatcher, handshake, TargetPolicy } from '@mcp-fleet/probe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callerAddress, type Sim, startSim } from '../src/index';
import { GeoFaces } from '../src/targets/geo';

let sim: Sim;
const policy = new TargetPolicy({ allow: ['127.0.0.0/8'], deny: [] });
const from: Record<string, ReturnType<typeof guardedDispatcher>> = {
  '127.0.0.1': guardedDispatcher(policy, undefined, { localAddress: '127.0.0.1' }),
  '127.0.0.2': guardedDispatcher(policy, undefined, { localAddress: '127.0.0.2' }),
};

beforeAll(async () => {
  sim = await startSim({ only: ['geo'] });
});
afterAll(async () => {
  await sim?.close();
  await Promise.all(Object.values(from).map((d) => d.destroy()));
});

const url = () => sim.target('geo').url;
const newest = (address: string) =>
  handshake(url(), { revision: 'newest', timeoutMs: 5_000, dispatcher: from[address]! });

/** One POST from `localAddress`, with node:http (no probe in between): its status. */
function postFrom(localAddress: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url(),
      {
        method: 'POST',
        localAddress,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the geo target', () => {
  it('shows each caller its own face: 127.0.0.1 the default (modern), 127.0.0.2 the face set for it (legacy)', async () => {
    sim.face('geo', 'legacy', '127.0.0.2');
    const [one, two] = await Promise.all([newest('127.0.0.1'), newest('127.0.0.2')]);
    expect(one).toMatchObject({ outcome: 'success', negotiated: '2026-07-28' });
    expect(two).toMatchObject({ outcome: 'success', negotiated: '2025-11-25' });
    // The server saw each from its own address.
    const seen = new Set(sim.requests('geo').map((r) => r.remoteAddress));
    expect(seen).toEqual(new Set(['127.0.0.1', '127.0.0.2']));
    expect(sim.target('geo').faces).toEqual({ default: 'modern', byAddress: { '127.0.0.2': 'legacy' } });
  });

  it('switches a face at run time: the next request sees it', async () => {
    sim.face('geo', 'down');
    // The default face is down now: 127.0.0.1 gets 503 for every request, 127.0.0.2 keeps its own.
    expect(await postFrom('127.0.0.1', '{}')).toBe(503);
    expect(await newest('127.0.0.1')).toMatchObject({ outcome: expect.not.stringMatching(/^success$/) });
    expect(await newest('127.0.0.2')).toMatchObject({ outcome: 'success', negotiated: '2025-11-25' });
    expect(sim.target('geo').supports).toEqual([]);

    sim.face('geo', 'modern', '127.0.0.2');
    expect(await newest('127.0.0.2')).toMatchObject({ outcome: 'success', negotiated: '2026-07-28' });
    sim.face('geo', 'legacy');
    expect(await newest('127.0.0.1')).toMatchObject({ outcome: 'success', negotiated: '2025-11-25' });
    expect(sim.target('geo').supports).toEqual(['2025-11-25']);
  });

  it('modern-only speaks 2026-07-28 alone: a test on 2025-11-25 hears an era signal and moves at once', async () => {
    sim.face('geo', 'modern-only', '127.0.0.2');
    const pinned = await handshake(url(), { revision: '2025-11-25', timeoutMs: 5_000, dispatcher: from['127.0.0.2']! });
    expect(pinned.outcome).not.toBe('success');
    const moved = await handshake(url(), {
      revision: 'newest',
      current: '2025-11-25',
      timeoutMs: 5_000,
      dispatcher: from['127.0.0.2']!,
    });
    expect(moved).toMatchObject({ outcome: 'success', negotiated: '2026-07-28', previousRevision: '2025-11-25' });
  });

  it('refuses a face it does not have, and a face for something that is no IP address', () => {
    expect(() => sim.face('geo', 'sideways' as never)).toThrow(/no face "sideways"/);
    expect(() => sim.face('geo', 'down', 'eu-west.example')).toThrow(/IP address/);
    expect(() => sim.face('geo', 'down', '127.0.0.0/8')).toThrow(/IP address/);
  });
});

describe("faces by the caller's address", () => {
  it('reads an IPv4-mapped IPv6 address as the IPv4 address', () => {
    expect(callerAddress('::ffff:127.0.0.2')).toBe('127.0.0.2');
    expect(callerAddress('::1')).toBe('::1');
    const faces = new GeoFaces();
    faces.set('down', '::ffff:127.0.0.3');
    expect(faces.of('127.0.0.3')).toBe('down');
    expect(faces.of('::ffff:127.0.0.3')).toBe('down');
    expect(faces.of('127.0.0.4')).toBe('modern');
  });
});

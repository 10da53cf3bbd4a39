// What control tells the operator while results come in: each change someone on call cares about —
// an era move, a downgrade, a pinned test failing and recovering — is one log line with a stable
// `event` field, told once (more runs in the same state say nothing), from real drifting servers.
import { Writable } from 'node:stream';
import { createLogger } from '@mcp-fleet/log';
import { waitFor } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGIONS, startTestMonitor, type TestMonitor } from './support';

interface Line {
  event?: string;
  server?: string;
  region?: string;
  msg: string;
}

interface ApiServer {
  name: string;
  byRegion: { region: string; currentRevision: string | null; lastOutcome: string | null }[];
}

describe('control logs each operator-relevant change once', () => {
  let m: TestMonitor;
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Line);
      done();
    },
  });

  beforeAll(async () => {
    m = await startTestMonitor(
      'pglite+memory',
      [{ name: 'drifter-modern' }, { name: 'drifter-pinned', tests: ['2025-03-26'] }],
      { interval: '1s', timeout: '900ms', controlLog: createLogger('control', 'info', sink) },
    );
  });
  afterAll(async () => {
    await m?.close();
  });

  const events = (event: string, server: string, region?: string) =>
    lines.filter((l) => l.event === event && l.server === server && (region === undefined || l.region === region));
  const everyRegion = (event: string, server: string) =>
    REGIONS.every((region) => events(event, server, region).length > 0);
  const revisions = async (name: string) => {
    const { servers } = (await m.api<{ servers: ApiServer[] }>('/api/servers')).body;
    return servers.find((s) => s.name === name)?.byRegion ?? [];
  };

  it('an era move, a downgrade, a pin failing and recovering: one line each per region', async () => {
    // Where each test starts is not a change.
    await waitFor('both tests to have run in both regions', async () => {
      const modern = await revisions('drifter-modern');
      const pinned = await revisions('drifter-pinned');
      return modern.length === 2 && modern.every((r) => r.currentRevision) && pinned.every((r) => r.lastOutcome);
    });
    expect(lines.filter((l) => l.event && !l.event.startsWith('server_'))).toEqual([]);
    const start = (await revisions('drifter-modern'))[0]!.currentRevision;
    // Up to the modern era and back down (or down first, if it started modern).
    const [first, second] =
      start === '2026-07-28' ? [['2025-11-25'], ['2026-07-28']] : [['2026-07-28'], ['2025-11-25']];

    m.sim.drift('drifter-modern', first as never);
    m.sim.drift('drifter-pinned', ['2025-06-18', '2025-11-25']);
    await waitFor(
      'the first move and the failing pin',
      () =>
        everyRegion(start === '2026-07-28' ? 'downgrade' : 'era_move', 'drifter-modern') &&
        everyRegion('pin_failing', 'drifter-pinned'),
    );
    m.sim.drift('drifter-modern', second as never);
    m.sim.drift('drifter-pinned', ['2025-03-26', '2025-06-18', '2025-11-25']);
    await waitFor(
      'the move back and the pin recovering',
      () =>
        everyRegion('era_move', 'drifter-modern') &&
        everyRegion('downgrade', 'drifter-modern') &&
        everyRegion('pin_recovered', 'drifter-pinned'),
    );
    // Three more runs in the same state tell nothing new.
    await new Promise((r) => setTimeout(r, 3_500));

    for (const region of REGIONS) {
      const [move] = events('era_move', 'drifter-modern', region);
      expect(events('era_move', 'drifter-modern', region)).toHaveLength(1);
      expect(move!.msg).toBe(
        `era move (unconfirmed): drifter-modern in ${region} now 2026-07-28, was 2025-11-25 (legacy to modern)`,
      );
      expect(events('downgrade', 'drifter-modern', region)).toHaveLength(1);
      expect(events('downgrade', 'drifter-modern', region)[0]!.msg).toBe(
        `downgrade (unconfirmed): drifter-modern in ${region} now 2025-11-25, was 2026-07-28 (modern to legacy)`,
      );
      expect(events('pin_failing', 'drifter-pinned', region).map((l) => l.msg)).toEqual([
        `pin failing: drifter-pinned in ${region} no longer speaks 2025-03-26`,
      ]);
      expect(events('pin_recovered', 'drifter-pinned', region).map((l) => l.msg)).toEqual([
        `pin recovered: drifter-pinned in ${region} speaks 2025-03-26 again`,
      ]);
    }
  });

  it('a server created or retired through the API is a line too', async () => {
    const created = await m.api<{ server: { id: string } }>('/api/servers', {
      method: 'POST',
      json: { name: 'added-by-hand', url: m.sim.target('drifter-modern').url },
    });
    expect(created.status).toBe(201);
    expect((await m.api(`/api/servers/${created.body.server.id}`, { method: 'DELETE' })).status).toBe(204);
    expect(events('server_created', 'added-by-hand').map((l) => l.msg)).toEqual([
      'server created: added-by-hand (API)',
    ]);
    expect(events('server_retired', 'added-by-hand').map((l) => l.msg)).toEqual([
      'server retired: added-by-hand (API)',
    ]);
    // The fleet file's servers were told when it was applied at start.
    expect(events('server_created', 'drifter-pinned').map((l) => l.msg)).toEqual([
      'server created: drifter-pinned (fleet file)',
    ]);
  });

  it('a fleet applied without a server retires it, and applied again with it revives it: a line each', async () => {
    const fleet = (names: string[]) => ({
      regions: REGIONS,
      defaults: { interval: '1s', timeout: '900ms' },
      policy: { allow: ['127.0.0.0/8'] },
      servers: names.map((name) => ({
        name,
        url: m.sim.target(name).url,
        tests: name === 'drifter-pinned' ? [{ revision: '2025-03-26' }] : [{ revision: 'newest' }],
      })),
    });
    const without = await m.api<{ retired: string[] }>('/api/fleet', {
      method: 'POST',
      json: fleet(['drifter-pinned']),
    });
    expect(without.status).toBe(200);
    expect(without.body.retired).toEqual(['drifter-modern']);
    const again = await m.api<{ revived: string[] }>('/api/fleet', {
      method: 'POST',
      json: fleet(['drifter-pinned', 'drifter-modern']),
    });
    expect(again.status).toBe(200);
    expect(again.body.revived).toEqual(['drifter-modern']);
    expect(events('server_retired', 'drifter-modern').map((l) => l.msg)).toEqual([
      'server retired: drifter-modern (fleet file)',
    ]);
    expect(events('server_revived', 'drifter-modern').map((l) => l.msg)).toEqual([
      'server revived: drifter-modern (fleet file)',
    ]);
  });
});

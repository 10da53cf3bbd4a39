// Applying the fleet declaratively: created, changed or retired, never duplicated; history kept;
// servers made through the API are not the file's to retire. Also through POST /api/fleet.
import { getServer, servers, tests } from '@mcp-fleet/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyFleet, parseFleet } from '../src';
import { type Monitor, startMonitor } from './support';

let m: Monitor;
beforeAll(async () => {
  m = await startMonitor('pglite+memory', [], { agents: false, interval: '60s' });
});
afterAll(async () => {
  await m?.close();
});

const fleet = (body: string) =>
  parseFleet(`regions: [eu-west, us-east]\npolicy: { allow: ["127.0.0.0/8"] }\nservers:\n${body}`, 'f.yaml', {});

describe('applying a fleet definition', () => {
  it('creates, changes and retires servers and tests, never duplicates, keeps history', async () => {
    const first = fleet(
      `  - { name: a, url: "http://127.0.0.1:1/mcp" }\n  - name: b\n    url: http://127.0.0.1:2/mcp\n    tests: [{ revision: newest }, { revision: "2025-06-18" }]\n`,
    );
    expect(await applyFleet(m.store.db, first)).toMatchObject({ created: ['a', 'b'], testsCreated: 3 });
    expect(await applyFleet(m.store.db, first)).toMatchObject({
      created: [],
      updated: [],
      retired: [],
      unchanged: ['a', 'b'],
      testsCreated: 0,
      testsRetired: 0,
    });

    const second = fleet(
      `  - name: b\n    url: http://127.0.0.1:2/mcp\n    interval: 30s\n    tests: [{ revision: newest }, { revision: "2025-11-25" }]\n  - { name: c, url: "http://127.0.0.1:3/mcp" }\n`,
    );
    expect(await applyFleet(m.store.db, second)).toMatchObject({
      created: ['c'],
      updated: ['b'],
      retired: ['a'],
      testsCreated: 2,
      testsRetired: 1,
    });

    const rows = await m.store.db.select().from(servers);
    expect(rows.filter((s) => s.name === 'a')).toHaveLength(1);
    expect(rows.find((s) => s.name === 'a')!.retiredAt).not.toBeNull();
    expect(rows.filter((s) => s.name === 'b' && !s.retiredAt)).toHaveLength(1);
    const allTests = await m.store.db.select().from(tests);
    expect(allTests.filter((t) => t.pinnedRevision === '2025-06-18' && t.retiredAt)).toHaveLength(1);
  });

  it('leaves servers created through the API alone', async () => {
    const res = await m.api('/api/servers', {
      method: 'POST',
      json: { name: 'from-api', url: 'https://api.example.com/mcp' },
    });
    expect(res.status).toBe(201);
    const summary = await applyFleet(m.store.db, fleet(`  - { name: c, url: "http://127.0.0.1:3/mcp" }\n`));
    expect(summary.retired).toEqual(['b']);
    const live = (await m.store.db.select().from(servers)).filter((s) => !s.retiredAt).map((s) => s.name);
    expect(live.sort()).toEqual(['c', 'from-api']);
  });

  it('applies a file sent to POST /api/fleet, and answers its problems with lines, applying nothing', async () => {
    const yaml = (body: string) => `regions: [eu-west]\npolicy: { allow: ["127.0.0.0/8"] }\nservers:\n${body}`;
    const post = (text: string) =>
      fetch(`${m.control.url}/api/fleet`, {
        method: 'POST',
        headers: { 'content-type': 'application/yaml' },
        body: text,
      });
    const bad = await post(yaml('  - { name: d, url: "ftp://x" }\n'));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/line 4: servers\[0\]\.url: an http/);
    const good = await post(
      yaml('  - { name: c, url: "http://127.0.0.1:3/mcp" }\n  - { name: d, url: "http://127.0.0.1:4/mcp" }\n'),
    );
    expect(good.status).toBe(200);
    expect(await good.json()).toMatchObject({ created: ['d'], unchanged: ['c'] });
  });

  it('keeps a URL with credentials sealed: applied again it is unchanged, a new token changes it', async () => {
    const withToken = (token: string) =>
      fleet(
        `  - { name: c, url: "http://127.0.0.1:3/mcp" }\n  - { name: u, url: "http://op:pw-1234@127.0.0.1:5/mcp?token=${token}" }\n`,
      );
    expect(await applyFleet(m.store.db, withToken('tok-1111'))).toMatchObject({ created: ['u'] });
    const row = (await m.store.db.select().from(servers)).find((s) => s.name === 'u' && !s.retiredAt)!;
    expect(row.url).toBe('http://••••••:••••••@127.0.0.1:5/mcp?token=••••••');
    expect(JSON.stringify(row)).not.toMatch(/pw-1234|tok-1111/);
    // Compared with what it stands for, not its masked form: no change, no re-seal.
    expect(await applyFleet(m.store.db, withToken('tok-1111'))).toMatchObject({ updated: [], unchanged: ['c', 'u'] });
    expect((await m.store.db.select().from(servers)).find((s) => s.id === row.id)!.urlSealed).toBe(row.urlSealed);
    expect(await applyFleet(m.store.db, withToken('tok-2222'))).toMatchObject({ updated: ['u'] });
    expect((await getServer(m.store.db, row.id))!.target).toBe('http://op:pw-1234@127.0.0.1:5/mcp?token=tok-2222');
  });
});

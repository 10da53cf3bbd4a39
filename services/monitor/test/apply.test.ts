// Applying the fleet declaratively: created, changed or retired, never duplicated; history kept;
// servers made through the API are not the file's to retire. Also through POST /api/fleet.

import { applyFleet, parseFleet } from '@mcp-fleet/control';
import { getServer, servers, testStates, tests } from '@mcp-fleet/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestMonitor, type TestMonitor } from './support';

let m: TestMonitor;
beforeAll(async () => {
  m = await startTestMonitor('pglite+memory', [], { agents: false, interval: '60s' });
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
    expect(((await bad.json()) as { error: string }).error).toMatch(
      /^invalid fleet definition, nothing applied:\n {2}request body:4:\d+: servers\[0\]\.url: an http/,
    );
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

describe('a server keeps its identity by name (issue 13 point 5)', () => {
  it('a retired server named again is revived: same id, its tests matched by key, its history one', async () => {
    const named = (tests: string, interval = '60s') =>
      fleet(
        `  - { name: keep, url: "http://127.0.0.1:6/mcp", interval: ${interval}, tests: [${tests}] }\n  - { name: other, url: "http://127.0.0.1:7/mcp" }\n`,
      );
    await applyFleet(m.store.db, named('{ revision: newest }, { revision: "2025-06-18" }'));
    const rows = async () => (await m.store.db.select().from(servers)).filter((s) => s.name === 'keep');
    const [before] = await rows();
    const testsBefore = (await m.store.db.select().from(tests)).filter((t) => t.serverId === before!.id);
    // A state of the pinned test in a region: the history a new id would split off.
    const pin = testsBefore.find((t) => t.pinnedRevision === '2025-06-18')!;
    await m.store.db.insert(testStates).values({ testId: pin.id, region: 'eu-west', currentRevision: '2025-06-18' });

    expect(await applyFleet(m.store.db, fleet('  - { name: other, url: "http://127.0.0.1:7/mcp" }\n'))).toMatchObject({
      retired: ['keep'],
    });
    const again = await applyFleet(m.store.db, named('{ revision: "2025-06-18" }, { revision: "2025-11-25" }', '30s'));
    expect(again).toMatchObject({ created: [], revived: ['keep'], unchanged: ['other'], testsCreated: 2 });
    expect(again.changes.keep).toEqual([
      expect.stringMatching(/^revived \(retired .*\): same id, history kept$/),
      'interval 1m → 30s',
      'test pinned 2025-06-18 revived',
      'test pinned 2025-11-25 added',
    ]);
    const after = await rows();
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ id: before!.id, retiredAt: null, source: 'file' });
    const testsAfter = (await m.store.db.select().from(tests)).filter((t) => t.serverId === before!.id);
    expect(testsAfter.find((t) => t.id === pin.id)!.retiredAt).toBeNull();
    expect(testsAfter.filter((t) => t.mode === 'newest').map((t) => t.retiredAt === null)).toEqual([false]);
    expect(
      testsAfter
        .filter((t) => !t.retiredAt)
        .map((t) => t.pinnedRevision)
        .sort(),
    ).toEqual(['2025-06-18', '2025-11-25']);
  });
});

describe('a dry run (issue 13 point 1)', () => {
  it('is the apply rolled back: the same summary, nothing written', async () => {
    const next = fleet(
      '  - { name: other, url: "http://127.0.0.1:7/mcp", interval: 45s }\n  - { name: fresh, url: "http://127.0.0.1:8/mcp" }\n',
    );
    const snapshot = async () => ({
      servers: await m.store.db.select().from(servers),
      tests: await m.store.db.select().from(tests),
    });
    const before = await snapshot();
    const plan = await applyFleet(m.store.db, next, { dryRun: true });
    expect(plan).toMatchObject({ dryRun: true, created: ['fresh'], updated: ['other'] });
    expect(plan.retired).toContain('keep');
    expect(plan.changes.other).toEqual(['interval 1m → 45s']);
    expect(await snapshot()).toEqual(before);
    const { dryRun: _, ...applied } = await applyFleet(m.store.db, next);
    const { dryRun: __, ...planned } = plan;
    expect(applied).toEqual(planned);
  });

  it('POST /api/fleet?dryRun=1 answers the plan and writes nothing; ?plan= applies only that plan', async () => {
    const body = {
      regions: ['eu-west'],
      policy: { allow: ['127.0.0.0/8'] },
      servers: [{ name: 'solo', url: 'http://127.0.0.1:9/mcp' }],
    };
    const post = (query: string) =>
      m.api<{ plan: string; retired: string[]; created: string[]; dryRun: boolean; error?: string }>(
        `/api/fleet${query}`,
        { method: 'POST', json: body },
      );
    const live = async () => (await m.store.db.select().from(servers)).filter((s) => !s.retiredAt).map((s) => s.name);
    const before = (await live()).sort();
    const plan = await post('?dryRun=1');
    expect(plan.status).toBe(200);
    expect(plan.body).toMatchObject({ dryRun: true, created: ['solo'] });
    expect(plan.body.retired.sort()).toEqual(before.filter((n) => n !== 'from-api'));
    expect((await live()).sort()).toEqual(before);

    const stale = await post('?plan=0000000000000000');
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatch(/the fleet changed since the plan was made, so nothing was applied/);
    expect((await live()).sort()).toEqual(before);
    expect((await post('?plan=nope')).status).toBe(400);

    const done = await post(`?plan=${plan.body.plan}`);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ dryRun: false, created: ['solo'], plan: plan.body.plan });
    expect((await live()).sort()).toEqual(['from-api', 'solo']);
  });
});

// Surfaces and scripts through the whole pipeline, all real: the fleet file's surface and script
// tests → Postgres → scheduler → NATS job → agent (against fleet-sim's SDK server) → result →
// ingest → Postgres. Then results forged on the bus (a trust boundary): a changed surface records
// classified changes and the metric, once however often it is delivered; a hostile snapshot (a
// forged hash, a body that is not its hash's, not canonical, not JSON, oversized, non-ASCII) is
// refused with a clear error and writes nothing.

import { Writable } from 'node:stream';
import type { NatsBus, Result } from '@mcp-fleet/bus';
import { handshakeJobId } from '@mcp-fleet/control';
import { createLogger } from '@mcp-fleet/log';
import { type Surface, snapshotOf, surfaceFromBody } from '@mcp-fleet/probe';
import { runs, surfaceBlobs, surfaceChanges, surfaceHeads } from '@mcp-fleet/store';
import { parseMetrics, seriesValue, waitFor } from '@mcp-fleet/testkit';
import { jetstream } from '@nats-io/jetstream';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestMonitor, type TestMonitor } from './support';

interface ApiServer {
  id: string;
  name: string;
  tests: { id: string; mode: string; depth: string; script: { steps: unknown[] } | null }[];
}

const SPARE = 'spare';

describe('surfaces and scripts end to end on postgres+nats', () => {
  let m: TestMonitor;
  let modern: ApiServer;
  // What control tells the operator (events.ts), one JSON line each.
  const lines: { event?: string; msg: string; server?: string; region?: string }[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });

  beforeAll(async () => {
    m = await startTestMonitor(
      'postgres+nats',
      [
        {
          name: 'modern',
          tests: [],
          surface: '3s',
          scripts: [
            {
              interval: '3s',
              steps: [
                {
                  method: 'tools/call',
                  params: { name: 'echo', arguments: { text: 'Paris' } },
                  expect: [{ isError: false }, { path: '$.content[0].text', equals: 'Paris' }, { latencyMs: 5000 }],
                },
              ],
            },
            {
              interval: '3s',
              steps: [
                { method: 'tools/list' },
                {
                  method: 'tools/call',
                  params: { name: 'echo', arguments: { text: 'Oslo' } },
                  expect: [{ path: '$.content[0].text', contains: 'Paris' }],
                },
              ],
            },
          ],
        },
      ],
      { interval: '3s', timeout: '2s', spareRegions: [SPARE], controlLog: createLogger('control', 'info', sink) },
    );
    modern = (await m.api<{ servers: ApiServer[] }>('/api/servers')).body.servers.find((s) => s.name === 'modern')!;
  }, 60_000);
  afterAll(async () => {
    await m?.close();
  });

  const db = () => m.store.db;
  const testOf = (depth: string, i = 0) => modern.tests.filter((t) => t.depth === depth)[i]!;
  const metric = async (name: string, labels: Record<string, string>) =>
    seriesValue(parseMetrics(await (await fetch(`${m.control.url}/metrics`)).text()), name, labels);
  const runsOf = (jobId: string) => db().select().from(runs).where(eq(runs.jobId, jobId));

  it('a surface test: the agent reads each era, ingest stores one blob per content and a head per era and region, no change at first sight', async () => {
    const surfaceTest = testOf('surface');
    const heads = await waitFor(
      'both eras read in both regions',
      async () => {
        const rows = await db().select().from(surfaceHeads).where(eq(surfaceHeads.serverId, modern.id));
        return rows.length === 4 ? rows : undefined;
      },
      40_000,
    );
    expect(new Set(heads.map((h) => `${h.region}/${h.era}`))).toEqual(
      new Set(['eu-west/legacy', 'eu-west/modern', 'us-east/legacy', 'us-east/modern']),
    );
    // The same server read from two regions is one blob per era's content, not four.
    const hashes = new Set(heads.map((h) => h.hash));
    const blobs = await db().select().from(surfaceBlobs);
    for (const h of hashes) expect(blobs.some((b) => b.hash === h)).toBe(true);
    const modernBlob = blobs.find((b) => b.hash === heads.find((h) => h.era === 'modern')!.hash)!;
    const surface = surfaceFromBody(modernBlob.body);
    expect(surface.tools.map((t) => t.name)).toContain('echo');
    expect(snapshotOf(surface).hash).toBe(modernBlob.hash);
    // Runs refer to it; nothing changed, so nothing was recorded.
    const [run] = await db().select().from(runs).where(eq(runs.testId, surfaceTest.id)).limit(1);
    expect(run!.surfaces).toEqual(expect.arrayContaining([expect.objectContaining({ era: 'modern' })]));
    expect(await db().select().from(surfaceChanges).where(eq(surfaceChanges.serverId, modern.id))).toEqual([]);
  }, 60_000);

  it('a script test: its steps run in the negotiated revision; a failing step fails the run with the step as its assertion', async () => {
    const scripts = modern.tests.filter((t) => t.depth === 'script');
    expect(scripts).toHaveLength(2);
    const passing = scripts.find((t) => t.script!.steps.length === 1)!;
    const failing = scripts.find((t) => t.script!.steps.length === 2)!;
    const ok = await waitFor(
      'a passing script run',
      async () => (await db().select().from(runs).where(eq(runs.testId, passing.id)).limit(1))[0],
      30_000,
    );
    expect(ok.outcome).toBe('success');
    expect(ok.script).toEqual([
      expect.objectContaining({ index: 0, method: 'tools/call', name: 'echo', status: 'pass' }),
    ]);
    const bad = await waitFor(
      'a failing script run',
      async () => (await db().select().from(runs).where(eq(runs.testId, failing.id)).limit(1))[0],
      30_000,
    );
    expect(bad.outcome).toBe('protocol_error');
    expect(bad.message).toMatch(/^script: /);
    expect(bad.assertion).toEqual(
      expect.objectContaining({ name: 'mcp.script.step', expected: 'step 2 tools/call echo passes' }),
    );
    expect((bad.assertion as { message: string }).message).toMatch(/Paris/);
    expect(bad.script).toEqual([
      expect.objectContaining({ status: 'pass', method: 'tools/list' }),
      expect.objectContaining({ status: 'fail', method: 'tools/call' }),
    ]);
  }, 60_000);

  it('the API takes a script test as the fleet file writes it, refuses the same script twice and steps where they do not belong', async () => {
    const steps = [{ method: 'tools/list', expect: [{ path: '$.tools[0].name', equals: 'echo' }] }];
    const made = await m.api<{ test: { id: string; depth: string; script: unknown } }>(
      `/api/servers/${modern.id}/tests`,
      { method: 'POST', json: { revision: 'newest', depth: 'script', steps } },
    );
    expect(made.status).toBe(201);
    expect(made.body.test).toMatchObject({ depth: 'script', script: { steps } });
    const again = await m.api(`/api/servers/${modern.id}/tests`, {
      method: 'POST',
      json: { revision: 'newest', depth: 'script', steps },
    });
    expect(again.status).toBe(409);
    for (const [body, said] of [
      [{ revision: 'newest', depth: 'surface', steps }, /only a test of depth `script` has steps/],
      [{ revision: 'newest', depth: 'script' }, /a script test needs `steps`/],
      [{ revision: 'newest', depth: 'script', steps: [{ method: 'Tools/Call' }] }, /an MCP method/],
      [{ revision: 'newest', depth: 'script', steps: Array(17).fill({ method: 'tools/list' }) }, /at most 16 steps/],
    ] as const) {
      const res = await m.api(`/api/servers/${modern.id}/tests`, { method: 'POST', json: body });
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(said);
    }
    // GET shows it, and a server body carried back unchanged (with its script tests) is accepted.
    const server = (await m.api<{ server: Record<string, unknown> }>(`/api/servers/${modern.id}`)).body.server;
    const back = await m.api(`/api/servers/${modern.id}`, { method: 'PATCH', json: server });
    expect(back.status).toBe(200);
  });

  describe('forged results in a region no agent probes', () => {
    let base: Surface;
    let slot = Date.now() - 50 * 60_000;
    const nextSlot = () => {
      slot += 60_000;
      return slot;
    };

    beforeAll(async () => {
      const [head] = await db()
        .select()
        .from(surfaceHeads)
        .where(and(eq(surfaceHeads.serverId, modern.id), eq(surfaceHeads.era, 'modern')))
        .limit(1);
      const [blob] = await db().select().from(surfaceBlobs).where(eq(surfaceBlobs.hash, head!.hash));
      base = surfaceFromBody(blob!.body);
    });

    const result = (surfaces: unknown[], at = nextSlot()): Result => {
      const testId = testOf('surface').id;
      return {
        jobId: handshakeJobId(testId, SPARE, at),
        kind: 'handshake',
        region: SPARE,
        agent: 'forger',
        serverId: modern.id,
        testId,
        slot: at,
        scheduledAt: new Date(at).toISOString(),
        startedAt: new Date(at + 100).toISOString(),
        finishedAt: new Date(at + 200).toISOString(),
        traceId: null,
        conformance: null,
        surfaces: surfaces as Result['surfaces'],
        script: null,
        run: {
          mode: 'newest',
          requested: '2026-07-28',
          negotiated: '2026-07-28',
          generation: 'stateless',
          era: 'modern',
          outcome: 'success',
          message: 'forged',
          previousRevision: null,
          requests: 1,
          millis: 1,
          serverInfo: { name: 'forged', version: '1' },
          assertion: null,
          lookup: { performed: false, found: null, requests: 0 },
          evidence: null,
        },
        detection: null,
      };
    };
    const publishRaw = (r: Result | string, region = SPARE) =>
      jetstream((m.bus as NatsBus).connection).publish(
        `${m.namespace}.results.${region}`,
        typeof r === 'string' ? r : JSON.stringify(r),
      );
    const changesIn = () =>
      db()
        .select()
        .from(surfaceChanges)
        .where(and(eq(surfaceChanges.serverId, modern.id), eq(surfaceChanges.region, SPARE)));

    it('a changed surface records classified changes and counts them, once however often it is delivered', async () => {
      const first = result([snapshotOf(base)]);
      await publishRaw(first);
      await waitFor('the first sight', async () => (await runsOf(first.jobId)).length === 1);
      expect(await changesIn()).toEqual([]);

      // echo gains a required parameter and a new description; a tool is added.
      const echo = base.tools.find((t) => t.name === 'echo')!;
      const schema = echo.inputSchema as { properties: Record<string, unknown>; required?: string[] };
      const changed: Surface = {
        ...base,
        tools: [
          ...base.tools.filter((t) => t.name !== 'echo'),
          {
            ...echo,
            description: 'Echoes the given text, in a language.',
            inputSchema: {
              ...schema,
              properties: { ...schema.properties, lang: { type: 'string' } },
              required: [...(schema.required ?? []), 'lang'],
            },
          },
          { name: 'reverse', description: 'Reverses.', inputSchema: { type: 'object' } },
        ].sort((a, b) => (a.name < b.name ? -1 : 1)),
      };
      const breakingBefore = await metric('mcp_surface_changes_total', {
        severity: 'breaking',
        kind: 'tool',
        region: SPARE,
      });
      const second = result([snapshotOf(changed)]);
      await publishRaw(second);
      await waitFor('the change', async () => (await runsOf(second.jobId)).length === 1);
      const recorded = await changesIn();
      const said = recorded.map((c) => `${c.severity} ${c.kind} ${c.name} ${c.change}`);
      expect(said).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^breaking tool echo required_added/),
          expect.stringMatching(/^warning tool echo description/),
          expect.stringMatching(/^info tool reverse added/),
        ]),
      );
      const [run] = await runsOf(second.jobId);
      for (const c of recorded) {
        expect(c.runId).toBe(run!.id);
        expect(c.fromHash).toBe(snapshotOf(base).hash);
        expect(c.toHash).toBe(snapshotOf(changed).hash);
        expect(c.at.toISOString()).toBe(second.finishedAt);
      }
      expect(await metric('mcp_surface_changes_total', { severity: 'breaking', kind: 'tool', region: SPARE })).toBe(
        breakingBefore + recorded.filter((c) => c.severity === 'breaking' && c.kind === 'tool').length,
      );
      const [head] = await db()
        .select()
        .from(surfaceHeads)
        .where(and(eq(surfaceHeads.region, SPARE), eq(surfaceHeads.era, 'modern')));
      expect(head!.hash).toBe(snapshotOf(changed).hash);

      // On call reads the breaking change once, as the history says it.
      const told = () => lines.filter((l) => l.event === 'surface_breaking_change' && l.region === SPARE);
      expect(told().map((l) => l.msg)).toEqual([expect.stringMatching(/^modern in spare: tool `echo`.*\(breaking\)$/)]);

      // Redelivered twice: nothing written twice, nothing counted twice.
      const duplicatesBefore = await metric('mcp_ingest_total', { kind: 'handshake', result: 'duplicate' });
      await publishRaw(second);
      await publishRaw(second);
      await waitFor(
        'the duplicates',
        async () =>
          (await metric('mcp_ingest_total', { kind: 'handshake', result: 'duplicate' })) === duplicatesBefore + 2,
      );
      expect(await changesIn()).toHaveLength(recorded.length);
      expect(told()).toHaveLength(1);
      expect(await metric('mcp_surface_changes_total', { severity: 'breaking', kind: 'tool', region: SPARE })).toBe(
        breakingBefore + recorded.filter((c) => c.severity === 'breaking' && c.kind === 'tool').length,
      );

      // The same surface again: the head is seen again, no change.
      const third = result([snapshotOf(changed)]);
      await publishRaw(third);
      await waitFor('the unchanged one', async () => (await runsOf(third.jobId)).length === 1);
      expect(await changesIn()).toHaveLength(recorded.length);
    }, 60_000);

    it("the API shows a server's surface now and the changes, filtered and paged; a bad query is a 400 naming the parameter", async () => {
      const surface = await m.api<{
        surfaces: { region: string; era: string; hash: string; surface: { tools: { name: string }[] } }[];
        changes: { severity: string; name: string; message: string }[];
      }>(`/api/servers/${modern.id}/surface`);
      expect(surface.status).toBe(200);
      expect(surface.body.surfaces.map((s) => `${s.region}/${s.era}`)).toEqual(
        expect.arrayContaining(['eu-west/modern', 'spare/modern', 'us-east/legacy']),
      );
      const spare = surface.body.surfaces.find((s) => s.region === SPARE)!;
      expect(spare.surface.tools.map((t) => t.name)).toContain('reverse');
      expect(surface.body.changes.some((c) => c.severity === 'breaking' && c.name === 'echo')).toBe(true);

      const breaking = await m.api<{ changes: { severity: string; kind: string }[]; next: string | null }>(
        `/api/surface-changes?severity=breaking&kind=tool&server=${modern.id}&since=24h&limit=1`,
      );
      expect(breaking.status).toBe(200);
      expect(breaking.body.changes).toEqual([expect.objectContaining({ severity: 'breaking', kind: 'tool' })]);
      const all = await m.api<{ changes: unknown[]; next: string | null }>(`/api/surface-changes?limit=1`);
      expect(all.body.next).not.toBeNull();
      const page2 = await m.api<{ changes: unknown[] }>(
        `/api/surface-changes?limit=1&cursor=${encodeURIComponent(all.body.next!)}`,
      );
      expect(page2.body.changes).toHaveLength(1);
      expect(page2.body.changes).not.toEqual(all.body.changes);
      for (const [query, said] of [
        ['severity=fatal', /severity: one of breaking, warning, info/],
        ['kind=%27%3B%20drop%20table', /kind: one of/],
        ['server=not-a-uuid', /server: a server id/],
        ['until=yesterday', /until: an ISO time/],
        ['limit=100000', /limit: a whole number from 1 to 500/],
        ['cursor=abc', /cursor/],
        [`cursor=${'x'.repeat(5000)}`, /cursor/],
      ] as const) {
        const res = await m.api<{ error: string }>(`/api/surface-changes?${query}`);
        expect(res.status, query).toBe(400);
        expect(JSON.stringify(res.body), query).toMatch(said);
      }
      expect((await m.api(`/api/servers/00000000-0000-4000-8000-000000000000/surface`)).status).toBe(404);
    });

    it('refuses a hostile snapshot with a clear error and writes nothing', async () => {
      const good = snapshotOf(base);
      const other = snapshotOf({ ...base, tools: [] });
      // The same surface, its keys in another order: the same content under another hash.
      const spaced = JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(good.body)).reverse()));
      const notJson = '{"era":"modern",';
      const sha = (await import('node:crypto')).createHash;
      const hashOf = (s: string) => sha('sha256').update(s).digest('hex');
      const cases: { what: string; surfaces: unknown[]; by: 'store' | 'bus' }[] = [
        { what: 'a hash that is not its body', surfaces: [{ ...good, hash: other.hash }], by: 'store' },
        { what: 'a body that is not its hash', surfaces: [{ ...good, body: other.body }], by: 'store' },
        { what: 'a body not canonical', surfaces: [{ ...good, body: spaced, hash: hashOf(spaced) }], by: 'store' },
        { what: 'malformed JSON', surfaces: [{ ...good, body: notJson, hash: hashOf(notJson) }], by: 'store' },
        { what: 'another era than its body', surfaces: [{ ...good, era: 'legacy' }], by: 'store' },
        { what: 'two of one era', surfaces: [good, good], by: 'store' },
        { what: 'a body with a line break', surfaces: [{ ...good, body: `${good.body}\n` }], by: 'bus' },
        { what: 'an upper-case hash', surfaces: [{ ...good, hash: good.hash.toUpperCase() }], by: 'bus' },
        { what: 'oversized', surfaces: [{ ...good, body: 'x'.repeat(90_001) }], by: 'bus' },
        { what: 'non-ASCII', surfaces: [{ ...good, body: good.body.replace('echo', 'écho') }], by: 'bus' },
      ];
      for (const c of cases) {
        const r = result(c.surfaces);
        const rejected = await metric('mcp_ingest_total', { kind: 'handshake', result: 'rejected' });
        const poison = m.bus.stats().poison;
        const blobs = (await db().select({ hash: surfaceBlobs.hash }).from(surfaceBlobs)).length;
        await publishRaw(r);
        if (c.by === 'store')
          await waitFor(
            `${c.what} rejected`,
            async () => (await metric('mcp_ingest_total', { kind: 'handshake', result: 'rejected' })) === rejected + 1,
          );
        else await waitFor(`${c.what} poison`, () => m.bus.stats().poison > poison);
        expect(await runsOf(r.jobId), c.what).toEqual([]);
        expect((await db().select({ hash: surfaceBlobs.hash }).from(surfaceBlobs)).length, c.what).toBe(blobs);
      }
      // Malformed JSON as the whole message: poison.
      const poison = m.bus.stats().poison;
      await publishRaw('{"jobId":');
      await waitFor('a message that is not JSON', () => m.bus.stats().poison > poison);
    }, 60_000);
  });
});

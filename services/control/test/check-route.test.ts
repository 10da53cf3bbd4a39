// POST /api/check (issue 18): a conformance run by control, answering what `mcp-fleet check --json`
// prints, under control's probe policy (nothing sent to a refused address) and for admins only.
// A real control (PGlite, memory bus, tokens) and fleet-sim's `modern` and `bearer` targets.
import { SIM_BEARER_TOKEN, type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { checkJson, conformance } from '@mcp-fleet/probe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Control } from '../src';
import { ADMIN, type ControlFixture, controlFixture, READ } from './fixture';

let fixture: ControlFixture;
let control: Control;
/** The same fleet, with control's default probe floor: public addresses only. */
let floored: Control;
let sim: Sim;

beforeAll(async () => {
  fixture = await controlFixture('check-route', { keyring: true });
  control = fixture.control;
  floored = await fixture.start({ probeFloor: undefined });
  sim = await startSim({ only: ['modern', 'bearer'] });
});

afterAll(async () => {
  await fixture?.close();
  await sim?.close();
});

async function check(
  json: unknown,
  opts: { token?: string; to?: Control; contentType?: string } = {},
): Promise<{ status: number; text: string; body: Record<string, unknown> }> {
  const res = await fetch(`${(opts.to ?? control).url}/api/check`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${opts.token ?? ADMIN}`,
      'content-type': opts.contentType ?? 'application/json',
    },
    body: typeof json === 'string' ? json : JSON.stringify(json),
  });
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) as Record<string, unknown> };
}

describe('POST /api/check', () => {
  it('runs the conformance checks on the modern target and passes, in the CLI --json shape', async () => {
    const res = await check({ url: sim.target('modern').url });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      target: sim.target('modern').url,
      protocol: { requested: 'auto', negotiated: '2026-07-28', era: 'modern' },
      pass: true,
      outcome: 'success',
    });
    const checks = res.body.checks as { id: string; level: string; status: string; message: string }[];
    expect(checks.length).toBeGreaterThan(0);
    for (const c of checks) {
      expect(['MUST', 'SHOULD']).toContain(c.level);
      expect(['pass', 'fail', 'skip']).toContain(c.status);
    }
    // The same keys, and the same checks, as the CLI's --json of a run made here.
    const local = checkJson(await conformance(sim.target('modern').url));
    expect(Object.keys(res.body).sort()).toEqual(Object.keys(local).sort());
    expect(checks.map((c) => [c.id, c.status])).toEqual(local.checks.map((c) => [c.id, c.status]));
  });

  it('takes a pinned protocol', async () => {
    const res = await check({ url: sim.target('modern').url, protocol: '2025-06-18' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.protocol).toMatchObject({ requested: '2025-06-18', negotiated: '2025-06-18', era: 'legacy' });
  });

  it('refuses an address the probe policy denies (400) and sends it nothing', async () => {
    const before = sim.requests('modern').length;
    const res = await check({ url: sim.target('modern').url }, { to: floored });
    expect(res.status).toBe(400);
    expect(String(res.body.error)).toMatch(/probe floor/);
    // After DNS too: a name that resolves to loopback is refused by the guarded dispatcher.
    const byName = await check({ url: sim.target('modern').url.replace('127.0.0.1', 'localhost') }, { to: floored });
    if (byName.status === 200) expect(byName.body.pass).toBe(false);
    else expect(byName.status).toBe(400);
    expect(sim.requests('modern').length).toBe(before);
  });

  it('sends given headers and redacts what the server echoes of them', async () => {
    // The bearer target's 401 echoes the Authorization header it was sent.
    const wrong = 'Bearer wrong-token-echoed-back-0123456789';
    const refused = await check({ url: sim.target('bearer').url, headers: { Authorization: wrong } });
    expect(refused.status).toBe(200);
    expect(refused.body.pass).toBe(false);
    expect(refused.text).not.toContain('wrong-token-echoed-back');

    const passed = await check({
      url: sim.target('bearer').url,
      headers: { Authorization: `Bearer ${SIM_BEARER_TOKEN}` },
    });
    expect(passed.status, passed.text).toBe(200);
    expect(passed.body.pass).toBe(true);
    expect(passed.text).not.toContain(SIM_BEARER_TOKEN);
  });

  it('uses a named credential for its own origin', async () => {
    const created = await fetch(`${control.url}/api/credentials`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'check-bearer',
        url: sim.target('bearer').url,
        headers: { Authorization: `Bearer ${SIM_BEARER_TOKEN}` },
      }),
    });
    expect(created.status).toBe(201);
    const { credential } = (await created.json()) as { credential: { id: string } };
    const res = await check({ url: sim.target('bearer').url, credentialId: credential.id });
    expect(res.status, res.text).toBe(200);
    expect(res.body.pass).toBe(true);
    expect(res.text).not.toContain(SIM_BEARER_TOKEN);
  });

  it('is for admins: a read token is refused (403) and sends nothing', async () => {
    const before = sim.requests('modern').length;
    const res = await check({ url: sim.target('modern').url }, { token: READ });
    expect(res.status).toBe(403);
    expect(sim.requests('modern').length).toBe(before);
  });

  it('refuses bad bodies (400) and other media types (415) before sending anything', async () => {
    const before = sim.requests('modern').length;
    const url = sim.target('modern').url;
    const bad: [string, unknown, RegExp][] = [
      ['no url', {}, /url/],
      ['a non-http url', { url: 'ftp://127.0.0.1/mcp' }, /url/],
      ['a masked url', { url: url.replace('http://', 'http://••••••@') }, /url/],
      ['an unknown protocol', { url, protocol: '2099-01-01' }, /protocol: auto, legacy or one of/],
      ['an unknown field', { url, crossEra: true }, /crossEra|unrecognized/i],
      ['a timeout out of bounds', { url, timeoutMs: 5 }, /timeoutMs/],
      ['a header the probe owns', { url, headers: { Host: 'evil.example' } }, /set by the probe/],
      ['a value with a line break', { url, headers: { 'X-A': 'a\nb' } }, /control characters/],
      ['a credential id that is no uuid', { url, credentialId: 'x' }, /credentialId/],
      ['an array', [url], /object|expected/i],
    ];
    for (const [what, body, message] of bad) {
      const res = await check(body);
      expect(res.status, what).toBe(400);
      expect(String(res.body.error), what).toMatch(message);
    }
    const notJson = await check('{"url":', {});
    expect(notJson.status).toBe(400);
    const plain = await check({ url }, { contentType: 'text/plain' });
    expect(plain.status).toBe(415);
    expect(sim.requests('modern').length).toBe(before);
  });
});

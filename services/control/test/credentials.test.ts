// Named credentials (issue 18): stored sealed, listed without values, referenced by id by
// /api/detect, /api/check and servers, and never sent to another origin. A real control (PGlite,
// memory bus, read and admin tokens) in front of fleet-sim's `bearer` target, which answers 401
// without its token (and echoes what it was sent), and `modern`, another origin on the same host.

import { randomBytes } from 'node:crypto';
import { CredentialsUnreadableError, isSealed, Keyring, parseSecretKey, sealedBy, useKeyring } from '@mcp-fleet/auth';
import { SIM_BEARER_TOKEN, type Sim, startSim } from '@mcp-fleet/fleet-sim';
import {
  createCredential,
  credentialHeadersFor,
  credentials,
  listActiveTests,
  resealCredentials,
  type Store,
  servers,
} from '@mcp-fleet/store';
import { TEST_SECRET_KEY } from '@mcp-fleet/testkit';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Control, parseFleet } from '../src';
import { ADMIN, type ControlFixture, controlFixture, READ } from './fixture';

const BEARER = `Bearer ${SIM_BEARER_TOKEN}`;

let fixture: ControlFixture;
let store: Store;
let control: Control;
let sim: Sim;

beforeAll(async () => {
  fixture = await controlFixture('credentials', { keyring: true });
  ({ store, control } = fixture);
  sim = await startSim({ only: ['bearer', 'modern'] });
});

afterAll(async () => {
  await fixture?.close();
  await sim?.close();
});

interface Answer {
  status: number;
  text: string;
  body: Record<string, unknown>;
}

async function api(
  method: string,
  path: string,
  json?: unknown,
  opts: { token?: string; contentType?: string } = {},
): Promise<Answer> {
  const res = await fetch(`${control.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${opts.token ?? ADMIN}`,
      ...(json === undefined ? {} : { 'content-type': opts.contentType ?? 'application/json' }),
    },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
  const text = await res.text();
  return { status: res.status, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const bearerUrl = () => sim.target('bearer').url;
const modernUrl = () => sim.target('modern').url;
const originOf = (url: string) => new URL(url).origin;

let credentialId: string;

describe('creating and listing credentials', () => {
  it('answers the credential without its values, and lists it the same way', async () => {
    const created = await api('POST', '/api/credentials', {
      name: 'sim-bearer',
      url: bearerUrl(),
      headers: { Authorization: BEARER, 'X-Api-Key': 'second-secret-value' },
    });
    expect(created.status, created.text).toBe(201);
    const credential = created.body.credential as Record<string, unknown>;
    expect(credential).toMatchObject({
      name: 'sim-bearer',
      origin: originOf(bearerUrl()),
      headerNames: ['Authorization', 'X-Api-Key'],
      usedBy: 0,
    });
    credentialId = credential.id as string;
    expect(created.text).not.toContain(SIM_BEARER_TOKEN);
    expect(created.text).not.toContain('second-secret-value');

    for (const token of [ADMIN, READ]) {
      const listed = await api('GET', '/api/credentials', undefined, { token });
      expect(listed.status).toBe(200);
      expect(listed.body.credentials).toEqual([expect.objectContaining({ id: credentialId, name: 'sim-bearer' })]);
      expect(listed.text).not.toContain(SIM_BEARER_TOKEN);
      expect(listed.text).not.toContain('second-secret-value');
    }
  });

  it('holds no plaintext in the database: each value sealed', async () => {
    const [row] = await store.db.select().from(credentials).where(eq(credentials.id, credentialId));
    expect(row).toBeDefined();
    const raw = JSON.stringify(row);
    expect(raw).not.toContain(SIM_BEARER_TOKEN);
    expect(raw).not.toContain('second-secret-value');
    for (const value of Object.values(row!.headers)) expect(isSealed(value)).toBe(true);
  });

  it('binds each seal to its credential: values copied to another credential do not unseal', async () => {
    const other = await createCredential(store.db, {
      name: 'copy-target',
      origin: originOf(bearerUrl()),
      headers: { Authorization: 'Bearer something-else' },
    });
    const [row] = await store.db.select().from(credentials).where(eq(credentials.id, credentialId));
    // Same origin, same header name, another credential: the context differs, so GCM refuses it.
    await store.db
      .update(credentials)
      .set({ headers: { Authorization: row!.headers.Authorization! } })
      .where(eq(credentials.id, other.id));
    await expect(credentialHeadersFor(store.db, other.id, bearerUrl())).rejects.toBeInstanceOf(
      CredentialsUnreadableError,
    );
    // Through the API it is the operator's to fix, and says nothing secret.
    const res = await api('POST', '/api/detect', { url: bearerUrl(), credentialId: other.id });
    expect(res.status).toBe(503);
    expect(res.text).not.toContain(SIM_BEARER_TOKEN);
    expect((await api('DELETE', `/api/credentials/${other.id}`)).status).toBe(204);
  });

  it('stores nothing without a key (503, saying what to set)', async () => {
    useKeyring(null);
    try {
      const res = await api('POST', '/api/credentials', {
        name: 'no-key',
        origin: originOf(bearerUrl()),
        headers: { Authorization: BEARER },
      });
      expect(res.status).toBe(503);
      expect(res.body.error).toMatch(/MCP_FLEET_SECRET_KEY/);
      expect(res.text).not.toContain(SIM_BEARER_TOKEN);
    } finally {
      useKeyring(store.keyring);
    }
    expect((await api('GET', '/api/credentials')).body.credentials).toHaveLength(1);
  });

  it('refuses a second credential with the same name (409)', async () => {
    const res = await api('POST', '/api/credentials', {
      name: 'sim-bearer',
      origin: originOf(bearerUrl()),
      headers: { Authorization: 'Bearer x' },
    });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/already exists/);
  });

  it('refuses hostile or malformed bodies (400) and other media types (415)', async () => {
    const good = { name: 'ok-name', origin: originOf(bearerUrl()), headers: { Authorization: 'Bearer x' } };
    const bad: [string, unknown, RegExp][] = [
      ['an unknown field', { ...good, extra: 1 }, /extra|unrecognized/i],
      ['no headers', { ...good, headers: {} }, /at least one header/],
      [
        '51 headers',
        { ...good, headers: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`X-H${i}`, 'v'])) },
        /at most 50/,
      ],
      ['a header name with a space', { ...good, headers: { 'Bad Name': 'v' } }, /header name/],
      ['a header the probe owns', { ...good, headers: { Host: 'evil.example' } }, /set by the probe/],
      ['a value with a line break', { ...good, headers: { 'X-Inject': 'a\r\nX-Other: b' } }, /control characters/],
      ['both url and origin', { ...good, url: bearerUrl() }, /one of them/],
      ['neither url nor origin', { name: 'ok-name', headers: { A: 'b' } }, /one of them/],
      ['an origin with a path', { ...good, origin: `${originOf(bearerUrl())}/mcp` }, /an origin/],
      ['an origin with credentials', { ...good, origin: 'http://user:pw@127.0.0.1:1' }, /an origin/],
      ['a non-http origin', { ...good, origin: 'ftp://127.0.0.1' }, /http/],
      ['a bad name', { ...good, name: '../etc' }, /name/],
      ['not an object', [good], /object|expected/i],
    ];
    for (const [what, body, message] of bad) {
      const res = await api('POST', '/api/credentials', body);
      expect(res.status, what).toBe(400);
      expect(String(res.body.error), what).toMatch(message);
    }
    const plain = await api('POST', '/api/credentials', good, { contentType: 'text/plain' });
    expect(plain.status).toBe(415);
    expect((await api('GET', '/api/credentials')).body.credentials).toHaveLength(1);
  });

  it('refuses writes with a read token (403), and everything without one (401)', async () => {
    const body = { name: 'by-reader', origin: originOf(bearerUrl()), headers: { A: 'b' } };
    expect((await api('POST', '/api/credentials', body, { token: READ })).status).toBe(403);
    expect((await api('DELETE', `/api/credentials/${credentialId}`, undefined, { token: READ })).status).toBe(403);
    // Using a credential makes control send traffic: admin only, as /api/detect always was.
    const detect = await api('POST', '/api/detect', { url: bearerUrl(), credentialId }, { token: READ });
    expect(detect.status).toBe(403);
    const anonymous = await fetch(`${control.url}/api/credentials`);
    expect(anonymous.status).toBe(401);
    expect((await api('GET', '/api/credentials')).body.credentials).toHaveLength(1);
  });
});

describe('using a credential', () => {
  it('detects the bearer target with it, and gets its 401 without it', async () => {
    const without = await api('POST', '/api/detect', { url: bearerUrl() });
    expect(without.status).toBe(200);
    expect(without.body.outcome).not.toBe('DETECTED');
    expect(without.text).toMatch(/401/);

    const withIt = await api('POST', '/api/detect', { url: bearerUrl(), credentialId });
    expect(withIt.status, withIt.text).toBe(200);
    expect(withIt.body).toMatchObject({ outcome: 'DETECTED', newestSupported: '2026-07-28' });
    expect(withIt.text).not.toContain(SIM_BEARER_TOKEN);
    // The target saw the credential's headers.
    expect(sim.requests('bearer').some((r) => r.hasAuthorization)).toBe(true);
  });

  it('never sends it to another origin: refused before any request reaches it', async () => {
    const otherPort = modernUrl();
    // Same host, other port; and the same port under another host name: both other origins.
    const sameHostOtherName = bearerUrl().replace('127.0.0.1', 'localhost');
    const before = sim.requests('bearer').length;
    for (const url of [otherPort, sameHostOtherName]) {
      const detect = await api('POST', '/api/detect', { url, credentialId });
      expect(detect.status, url).toBe(400);
      expect(String(detect.body.error)).toContain(`is only sent to ${originOf(bearerUrl())}`);
      const check = await api('POST', '/api/check', { url, credentialId });
      expect(check.status, url).toBe(400);
      // A pinned test would run once before saving: the refusal comes first.
      const server = await api('POST', '/api/servers', {
        name: 'elsewhere',
        url,
        credentialId,
        tests: [{ revision: '2026-07-28' }],
      });
      expect(server.status, url).toBe(400);
      expect(String(server.body.error)).toContain('never sent to another origin');
    }
    expect(sim.requests('modern')).toHaveLength(0);
    expect(sim.connections('modern')).toBe(0);
    expect(sim.requests('bearer').length).toBe(before);
    expect((await api('GET', '/api/servers')).text).not.toContain('elsewhere');
  });

  it('answers 400 naming an unknown id, and refuses headers given with it', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    const res = await api('POST', '/api/detect', { url: bearerUrl(), credentialId: unknown });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe(`credentialId: no credential ${unknown}`);
    const notUuid = await api('POST', '/api/detect', { url: bearerUrl(), credentialId: 'sim-bearer' });
    expect(notUuid.status).toBe(400);
    expect(String(notUuid.body.error)).toMatch(/^credentialId:/);
    const both = await api('POST', '/api/detect', {
      url: bearerUrl(),
      credentialId,
      headers: { Authorization: 'Bearer x' },
    });
    expect(both.status).toBe(400);
    expect(both.body.error).toMatch(/not both/);
    const server = await api('POST', '/api/servers', {
      name: 'both',
      url: bearerUrl(),
      credentialId,
      headers: { Authorization: 'Bearer x' },
    });
    expect(server.status).toBe(400);
  });
});

describe('servers that use a credential', () => {
  let serverId: string;

  it('copies its headers into the server (a pinned test passes with them) and names it', async () => {
    const res = await api('POST', '/api/servers', {
      name: 'guarded',
      url: bearerUrl(),
      credentialId,
      tests: [{ revision: '2026-07-28' }],
    });
    expect(res.status, res.text).toBe(201);
    const server = res.body.server as Record<string, unknown>;
    serverId = server.id as string;
    expect(server).toMatchObject({
      credentialId,
      credentialName: 'sim-bearer',
      headers: { Authorization: '••••••', 'X-Api-Key': '••••••' },
    });
    expect(res.text).not.toContain(SIM_BEARER_TOKEN);

    const read = await api('GET', `/api/servers/${serverId}`, undefined, { token: READ });
    expect(read.body.server).toMatchObject({ credentialId, credentialName: 'sim-bearer' });
    const listed = await api('GET', '/api/credentials');
    expect(listed.body.credentials).toEqual([expect.objectContaining({ id: credentialId, usedBy: 1 })]);

    // The server's own copy is sealed, and it is what the scheduler's jobs send.
    const [row] = await store.db.select().from(servers).where(eq(servers.id, serverId));
    expect(JSON.stringify(row)).not.toContain(SIM_BEARER_TOKEN);
    const [test] = await listActiveTests(store.db, serverId);
    expect(test?.headers).toEqual({ Authorization: BEARER, 'X-Api-Key': 'second-secret-value' });
  });

  it('keeps the credential through a GET → PATCH round trip', async () => {
    const read = await api('GET', `/api/servers/${serverId}`);
    const res = await api('PATCH', `/api/servers/${serverId}`, { ...(read.body.server as object), intervalMs: 90_000 });
    expect(res.status, res.text).toBe(200);
    expect(res.body.server).toMatchObject({ credentialId, credentialName: 'sim-bearer', intervalMs: 90_000 });
    const [test] = await listActiveTests(store.db, serverId);
    expect(test?.headers.Authorization).toBe(BEARER);
  });

  it('refuses to delete it while a live server uses it (409, naming the server)', async () => {
    const res = await api('DELETE', `/api/credentials/${credentialId}`);
    expect(res.status).toBe(409);
    expect(res.body.error).toContain('"guarded"');
    expect((await api('GET', '/api/credentials')).body.credentials).toHaveLength(1);
  });

  it('drops the link when the server is given other headers, then deletes it', async () => {
    const patched = await api('PATCH', `/api/servers/${serverId}`, { headers: { Authorization: 'Bearer other' } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.server).toMatchObject({ credentialId: null, credentialName: null });
    expect((await api('GET', '/api/credentials')).body.credentials).toEqual([expect.objectContaining({ usedBy: 0 })]);

    // Named again by PATCH: the credential's headers come back, for the server's own origin.
    const again = await api('PATCH', `/api/servers/${serverId}`, { credentialId });
    expect(again.status, again.text).toBe(200);
    expect(again.body.server).toMatchObject({ credentialId });
    expect((await listActiveTests(store.db, serverId))[0]?.headers.Authorization).toBe(BEARER);
    // A fleet file that names the server with headers of its own takes them over: the link goes.
    const applied = await control.apply(
      parseFleet(
        `regions: [eu-west]\npolicy: { allow: ["127.0.0.0/8"] }\nservers:\n  - name: guarded\n    url: ${bearerUrl()}\n    headers: { Authorization: "Bearer from-the-file" }\n    tests: [{ revision: "2026-07-28" }]\n`,
        'apply test',
      ),
    );
    expect(applied.updated).toEqual(['guarded']);
    expect((await api('GET', `/api/servers/${serverId}`)).body.server).toMatchObject({ credentialId: null });
    expect((await api('PATCH', `/api/servers/${serverId}`, { credentialId })).status).toBe(200);
    // A PATCH moving the URL to another origin while naming it is refused: nothing changes.
    const moved = await api('PATCH', `/api/servers/${serverId}`, { url: modernUrl(), credentialId });
    expect(moved.status).toBe(400);
    expect(sim.requests('modern')).toHaveLength(0);

    // Retired, the server no longer holds it.
    expect((await api('DELETE', `/api/servers/${serverId}`)).status).toBe(204);
    expect((await api('DELETE', `/api/credentials/${credentialId}`)).status).toBe(204);
    expect((await api('GET', '/api/credentials')).body.credentials).toEqual([]);
    expect((await api('DELETE', `/api/credentials/${credentialId}`)).status).toBe(404);
    expect((await api('DELETE', '/api/credentials/not-a-uuid')).status).toBe(404);
    // The retired server's history stays readable.
    const retired = await api('GET', `/api/servers/${serverId}`);
    expect(retired.body.server).toMatchObject({ credentialId: null });
  });
});

describe('key rotation', () => {
  it('re-seals credentials under the current key, so the previous one can go', async () => {
    const old = store.keyring!;
    const id = (
      await createCredential(store.db, {
        name: 'rotated',
        origin: originOf(bearerUrl()),
        headers: { Authorization: BEARER },
      })
    ).id;
    const next = new Keyring(randomBytes(32), { previous: [parseSecretKey(TEST_SECRET_KEY, 'test key')] });
    useKeyring(next);
    try {
      const report = await resealCredentials(store.db);
      expect(report).toEqual({ resealed: ['rotated'], unreadable: [] });
      const [row] = await store.db.select().from(credentials).where(eq(credentials.id, id));
      expect(sealedBy(row!.headers.Authorization!)).toBe(next.id);
      // The new key alone opens it now.
      useKeyring(new Keyring(randomBytes(32)));
      await expect(credentialHeadersFor(store.db, id, bearerUrl())).rejects.toBeInstanceOf(CredentialsUnreadableError);
      useKeyring(next);
      expect((await resealCredentials(store.db)).resealed).toEqual([]);
      const { headers } = await credentialHeadersFor(store.db, id, bearerUrl());
      expect(headers).toEqual({ Authorization: BEARER });
    } finally {
      useKeyring(old);
    }
  });
});

// Credentials at rest: header values are sealed (AES-256-GCM, a versioned envelope naming the
// key) before they reach the database and unsealed by the store functions; keys rotate; rows from
// before encryption stay readable and are sealed at start; without a key nothing is stored in
// the clear. Against both databases, reading the raw column.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CredentialsUnreadableError,
  currentKeyring,
  Keyring,
  keyId,
  SecretKeyError,
  sealedBy,
  useKeyring,
} from '@mcp-fleet/auth';
import { URL_MASK } from '@mcp-fleet/probe';
import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createServer,
  createTest,
  embeddedKeyFile,
  getServer,
  KeptCredentialsError,
  keptHeaders,
  keptUrl,
  listActiveServers,
  listActiveTests,
  openStore,
  type Store,
  sealStoredCredentials,
  servers,
  serversOverview,
  updateServer,
} from '../src';
import { BACKENDS } from './backends';

const key = () => randomBytes(32);
const ENVELOPE = /^mcpfleet:v1:[0-9a-f]{16}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]*$/;
const ringOf = (k: Buffer, previous: Buffer[] = []) => new Keyring(k, { previous, source: 'test' });

describe('the key of an embedded database', () => {
  it('lives beside its data directory', () => {
    expect(embeddedKeyFile(join('/data', 'embedded', 'pgdata'))).toBe(join('/data', 'embedded', 'secret.key'));
  });
});

describe.each(BACKENDS)('stored credentials on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  let storeKeyring: Keyring | null;
  let serial = 0;
  const name = () => `creds-${++serial}`;
  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
    storeKeyring = currentKeyring();
  });
  afterEach(() => useKeyring(storeKeyring));
  afterAll(() => backend.dispose());

  const raw = async (id: string) =>
    (await store.db.select({ headers: servers.headers }).from(servers).where(eq(servers.id, id)))[0]!.headers;
  const make1 = (headers: Record<string, string>, url = 'https://a.example.com/mcp') =>
    createServer(store.db, { name: name(), url, headers, intervalMs: 60_000, timeoutMs: 10_000 });

  it('are sealed in the database and plaintext to the store functions', async () => {
    expect(store.keyring).not.toBeNull();
    const s = await make1({ Authorization: 'Bearer planted-1', 'X-Api-Key': 'k-planted-2' });
    expect(s.headers).toEqual({ Authorization: 'Bearer planted-1', 'X-Api-Key': 'k-planted-2' });
    const stored = await raw(s.id);
    expect(Object.keys(stored)).toEqual(expect.arrayContaining(['Authorization', 'X-Api-Key']));
    for (const v of Object.values(stored)) {
      expect(v).toMatch(ENVELOPE);
      expect(sealedBy(v)).toBe(store.keyring!.id);
    }
    expect(JSON.stringify(stored)).not.toContain('planted');
    expect((await getServer(store.db, s.id))!.headers).toEqual(s.headers);
    expect((await listActiveServers(store.db)).find((x) => x.id === s.id)!.headers).toEqual(s.headers);
    await createTest(store.db, { serverId: s.id, mode: 'newest' });
    const [t] = await listActiveTests(store.db, s.id);
    expect(t).toMatchObject({ headers: s.headers, credentialsError: null });
  });

  it('stay on their origin: a URL moved elsewhere drops them unless given again, and a moved seal does not unseal', async () => {
    const s = await make1({ Authorization: 'Bearer planted-3' });
    const before = await raw(s.id);
    // Same origin: the seal stays.
    const same = await updateServer(store.db, s.id, { url: 'https://a.example.com/v2/mcp' });
    expect(same!.headersDropped).toEqual([]);
    expect(await raw(s.id)).toEqual(before);
    // Another origin: the stored credential does not follow the URL there, and the answer says so.
    const moved = await updateServer(store.db, s.id, { url: 'https://b.example.com/mcp' });
    expect(moved!.headers).toEqual({});
    expect(moved!.headersDropped).toEqual(['Authorization']);
    expect(await raw(s.id)).toEqual({});
    // Given again with the move, they go, sealed for the URL they go to.
    const back = await updateServer(store.db, s.id, {
      url: 'https://a.example.com/mcp',
      headers: { Authorization: 'Bearer planted-3' },
    });
    expect(back!.headersDropped).toEqual([]);
    expect((await getServer(store.db, s.id))!.headers).toEqual({ Authorization: 'Bearer planted-3' });
    expect((await raw(s.id)).Authorization).not.toBe(before.Authorization);
    // New headers are sealed for the URL they go to.
    await updateServer(store.db, s.id, { headers: { Authorization: 'Bearer planted-4' } });
    expect(JSON.stringify(await raw(s.id))).not.toContain('planted');
    expect((await getServer(store.db, s.id))!.headers).toEqual({ Authorization: 'Bearer planted-4' });

    // Someone with write access to the database points the server elsewhere, or copies the seal.
    const thief = await make1({}, 'https://thief.example.net/mcp');
    await store.db
      .update(servers)
      .set({ headers: await raw(s.id) })
      .where(eq(servers.id, thief.id));
    await expect(getServer(store.db, thief.id)).rejects.toThrow(CredentialsUnreadableError);
    await store.db.update(servers).set({ url: 'https://thief.example.net/mcp' }).where(eq(servers.id, s.id));
    await expect(getServer(store.db, s.id)).rejects.toThrow(/does not authenticate/);
    // The scheduler's list marks them and keeps the others.
    await createTest(store.db, { serverId: thief.id, mode: 'newest' });
    const tests = await listActiveTests(store.db);
    const bad = tests.find((t) => t.serverId === thief.id)!;
    expect(bad.headers).toEqual({});
    expect(bad.credentialsError).toMatch(/header "Authorization" of server "creds-\d+": sealed under key/);
    expect(tests.filter((t) => t.serverId !== thief.id).every((t) => t.credentialsError === null)).toBe(true);
    const report = await sealStoredCredentials(store.db);
    expect(report.unreadable.map((u) => u.name).sort()).toEqual([s.name, thief.name].sort());
    // Put them back for the next tests.
    await store.db.update(servers).set({ retiredAt: new Date() }).where(eq(servers.id, thief.id));
    await store.db.update(servers).set({ retiredAt: new Date() }).where(eq(servers.id, s.id));
  });

  it('are sealed the same inside a transaction (applying the fleet file updates servers in one)', async () => {
    const s = await make1({ Authorization: 'Bearer tx-planted-5' });
    await store.db.transaction(async (tx) => {
      await updateServer(tx, s.id, { url: 'https://c.example.com/mcp' });
      await updateServer(tx, s.id, { headers: { Authorization: 'Bearer tx-planted-6' } });
    });
    expect(JSON.stringify(await raw(s.id))).not.toContain('planted');
    expect((await getServer(store.db, s.id))!).toMatchObject({
      url: 'https://c.example.com/mcp',
      headers: { Authorization: 'Bearer tx-planted-6' },
    });
  });

  it('written before encryption are read as they are, and sealed at start', async () => {
    const s = await make1({});
    await store.db
      .update(servers)
      .set({ headers: { Authorization: 'Bearer legacy-planted' } })
      .where(eq(servers.id, s.id));
    expect((await getServer(store.db, s.id))!.headers).toEqual({ Authorization: 'Bearer legacy-planted' });
    const report = await sealStoredCredentials(store.db);
    expect(report.resealed).toContain(s.name);
    expect(report.unreadable.filter((u) => !u.retired)).toEqual([]);
    expect((await raw(s.id)).Authorization).toMatch(ENVELOPE);
    expect((await getServer(store.db, s.id))!.headers).toEqual({ Authorization: 'Bearer legacy-planted' });
    expect((await sealStoredCredentials(store.db)).resealed).toEqual([]);
  });

  it('move to a new key: the previous one still unseals, and start re-seals everything under the new one', async () => {
    const a = key();
    const b = key();
    useKeyring(ringOf(a));
    const s = await make1({ Authorization: 'Bearer rotate-planted' });
    expect(sealedBy((await raw(s.id)).Authorization!)).toBe(keyId(a));
    // B alone cannot unseal it.
    useKeyring(ringOf(b));
    await expect(getServer(store.db, s.id)).rejects.toThrow(`sealed under key ${keyId(a)}`);
    // B with A as previous unseals it, and start seals it under B.
    useKeyring(ringOf(b, [a]));
    expect((await getServer(store.db, s.id))!.headers).toEqual({ Authorization: 'Bearer rotate-planted' });
    const report = await sealStoredCredentials(store.db);
    expect(report.resealed).toContain(s.name);
    expect(sealedBy((await raw(s.id)).Authorization!)).toBe(keyId(b));
    useKeyring(ringOf(b));
    expect((await getServer(store.db, s.id))!.headers).toEqual({ Authorization: 'Bearer rotate-planted' });
    await store.db.update(servers).set({ retiredAt: new Date() }).where(eq(servers.id, s.id));
  });

  it("a stdio server's env values (issue 20): sealed like headers, bound to the program, moved to a new key at start", async () => {
    const a = key();
    const b = key();
    useKeyring(ringOf(a));
    const command = { command: 'node', args: ['server.js'], env: { API_KEY: 'env-planted-7', MODE: 'test' } };
    const s = await createServer(store.db, {
      name: name(),
      url: 'stdio: node server.js',
      command,
      intervalMs: 60_000,
      timeoutMs: 10_000,
    });
    const stored = async () =>
      (await store.db.select({ command: servers.command }).from(servers).where(eq(servers.id, s.id)))[0]!.command!;
    expect((await stored()).env.API_KEY).toMatch(ENVELOPE);
    expect(JSON.stringify(await stored())).not.toContain('planted');
    expect((await getServer(store.db, s.id))!.command).toEqual(command);
    await createTest(store.db, { serverId: s.id, mode: 'newest' });
    expect((await listActiveTests(store.db, s.id))[0]).toMatchObject({ command, credentialsError: null });
    // A seal moved to another program does not unseal (the job would go without its env: not probed).
    const moved = await stored();
    await store.db
      .update(servers)
      .set({ command: { ...moved, command: 'python3' } })
      .where(eq(servers.id, s.id));
    expect((await listActiveTests(store.db, s.id))[0]!.credentialsError).toMatch(/env "(API_KEY|MODE)" of server/);
    await store.db.update(servers).set({ command: moved }).where(eq(servers.id, s.id));
    // A new key: start re-seals the env under it.
    useKeyring(ringOf(b, [a]));
    expect((await sealStoredCredentials(store.db)).resealed).toContain(s.name);
    expect(sealedBy((await stored()).env.API_KEY!)).toBe(keyId(b));
    useKeyring(ringOf(b));
    expect((await getServer(store.db, s.id))!.command?.env).toEqual(command.env);
    await store.db.update(servers).set({ retiredAt: new Date() }).where(eq(servers.id, s.id));
  });

  it('without a key: no credentials are stored in the clear, and start refuses while any are stored', async () => {
    useKeyring(null);
    await expect(make1({ Authorization: 'Bearer nokey-planted' })).rejects.toThrow(SecretKeyError);
    await expect(make1({ Authorization: 'Bearer nokey-planted' })).rejects.toThrow(
      /storing a server's headers \(credentials\) needs MCP_FLEET_SECRET_KEY/,
    );
    const plain = await make1({});
    await expect(updateServer(store.db, plain.id, { headers: { Authorization: 'Bearer x-planted' } })).rejects.toThrow(
      SecretKeyError,
    );
    expect(await raw(plain.id)).toEqual({});
    await expect(sealStoredCredentials(store.db)).rejects.toThrow(
      /stored server\(s\) have credentials .* and MCP_FLEET_SECRET_KEY is not set/,
    );
    await expect(listActiveServers(store.db)).rejects.toThrow(/are sealed, and MCP_FLEET_SECRET_KEY is not set/);
  });
});

describe.each(BACKENDS)('a URL with credentials on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  let storeKeyring: Keyring | null;
  let serial = 0;
  const name = () => `url-creds-${++serial}`;
  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
    storeKeyring = currentKeyring();
  });
  afterEach(() => useKeyring(storeKeyring));
  afterAll(() => backend.dispose());

  const FULL = 'https://u-planted:p-planted@127.0.0.1:8443/mcp?token=t-planted&v=1';
  const SHOWN = `https://${URL_MASK}:${URL_MASK}@127.0.0.1:8443/mcp?token=${URL_MASK}&v=${URL_MASK}`;
  /** The whole row as the database has it (raw SQL, no store function in between). */
  const rowText = async (id: string) => {
    const res = await store.db.execute(sql`select row_to_json(s)::text as row from servers s where id = ${id}`);
    return String((res as unknown as { rows: { row: string }[] }).rows[0]!.row);
  };
  const make1 = (url: string, headers: Record<string, string> = {}) =>
    createServer(store.db, { name: name(), url, headers, intervalMs: 60_000, timeoutMs: 10_000 });

  it('is stored masked, sealed whole beside it, and unsealed as the target a probe goes to', async () => {
    const s = await make1(FULL, { Authorization: 'Bearer h-planted' });
    expect(s).toMatchObject({ url: SHOWN, target: FULL });
    const text = await rowText(s.id);
    for (const secret of ['u-planted', 'p-planted', 't-planted', 'h-planted']) expect(text).not.toContain(secret);
    const [row] = await store.db.select().from(servers).where(eq(servers.id, s.id));
    expect(row!.url).toBe(SHOWN);
    expect(row!.urlSealed).toMatch(ENVELOPE);
    expect(await getServer(store.db, s.id)).toMatchObject({ url: SHOWN, target: FULL });
    await createTest(store.db, { serverId: s.id, mode: 'newest' });
    expect((await listActiveTests(store.db, s.id))[0]).toMatchObject({
      url: SHOWN,
      target: FULL,
      credentialsError: null,
    });
    // What the API and the dashboard read shows the mask.
    expect((await serversOverview(store.db, { ids: [s.id] }))[0]!.url).toBe(SHOWN);
    // A URL without credentials is kept as written, nothing sealed.
    const plain = await make1('https://127.0.0.1:8443/mcp?flag');
    const [plainRow] = await store.db.select().from(servers).where(eq(servers.id, plain.id));
    expect(plainRow).toMatchObject({ url: 'https://127.0.0.1:8443/mcp?flag', urlSealed: null });
  });

  it('keeps its masked parts on the same origin only; a masked part with nothing stored is refused', async () => {
    const s = await make1(FULL, { Authorization: 'Bearer h-planted' });
    // The form shows the mask; sent back with a new path, the stored parts stay.
    const moved = await updateServer(store.db, s.id, {
      url: SHOWN.replace('/mcp?', '/v2/mcp?').replace(`v=${URL_MASK}`, 'v=2'),
    });
    expect(moved).toMatchObject({
      target: 'https://u-planted:p-planted@127.0.0.1:8443/v2/mcp?token=t-planted&v=2',
      headers: { Authorization: 'Bearer h-planted' },
      headersDropped: [],
    });
    // Toward another origin the masked parts are refused, and nothing changes.
    const elsewhere = SHOWN.replace('127.0.0.1:8443', '127.0.0.2:8443');
    await expect(updateServer(store.db, s.id, { url: elsewhere })).rejects.toThrow(KeptCredentialsError);
    await expect(updateServer(store.db, s.id, { url: elsewhere })).rejects.toThrow(
      /url: the user name, password, query token, query v \(••••••\) stand for a stored credential, which is only sent to https:\/\/127\.0\.0\.1:8443: give it again for https:\/\/127\.0\.0\.2:8443/,
    );
    expect((await getServer(store.db, s.id))!.target).toBe(moved!.target);
    // Typed again, it moves (and the headers not given again are dropped).
    const retyped = await updateServer(store.db, s.id, { url: 'https://u:p-new@127.0.0.2:8443/mcp' });
    expect(retyped).toMatchObject({ target: 'https://u:p-new@127.0.0.2:8443/mcp', headersDropped: ['Authorization'] });
    await expect(make1(SHOWN)).rejects.toThrow(/nothing is stored here: give the value itself/);
  });

  it('written in the clear before is read as it is, and sealed at start; a seal moved to another host does not unseal', async () => {
    const s = await make1('https://127.0.0.1:8443/mcp');
    await store.db.update(servers).set({ url: FULL }).where(eq(servers.id, s.id));
    expect((await getServer(store.db, s.id))!.target).toBe(FULL);
    const report = await sealStoredCredentials(store.db);
    expect(report.resealed).toContain(s.name);
    expect(await rowText(s.id)).not.toContain('planted');
    expect(await getServer(store.db, s.id)).toMatchObject({ url: SHOWN, target: FULL });
    expect((await sealStoredCredentials(store.db)).resealed).not.toContain(s.name);
    // Someone with write access to the database points the display form at another host.
    await store.db
      .update(servers)
      .set({ url: SHOWN.replace('127.0.0.1', '127.0.0.3') })
      .where(eq(servers.id, s.id));
    await expect(getServer(store.db, s.id)).rejects.toThrow(
      /the URL of server "url-creds-\d+": .*does not authenticate/,
    );
    await createTest(store.db, { serverId: s.id, mode: 'newest' });
    expect((await listActiveTests(store.db, s.id))[0]!.credentialsError).toMatch(/does not authenticate/);
    await store.db.update(servers).set({ retiredAt: new Date() }).where(eq(servers.id, s.id));
  });

  it('without a key: is refused, and start refuses while one is stored in the clear', async () => {
    useKeyring(null);
    await expect(make1(FULL)).rejects.toThrow(SecretKeyError);
    await expect(make1(FULL)).rejects.toThrow(/storing a URL with credentials .* needs MCP_FLEET_SECRET_KEY/);
    const plain = await make1('https://127.0.0.1:8443/mcp?flag');
    await expect(updateServer(store.db, plain.id, { url: FULL })).rejects.toThrow(SecretKeyError);
    expect(await rowText(plain.id)).not.toContain('planted');
    await store.db.update(servers).set({ url: FULL }).where(eq(servers.id, plain.id));
    await expect(sealStoredCredentials(store.db)).rejects.toThrow(
      /have credentials .* MCP_FLEET_SECRET_KEY is not set/,
    );
  });
});

describe('the rule for kept credentials', () => {
  const stored = { url: 'https://a.example.com/mcp', headers: { Authorization: 'Bearer kept', 'X-Key': 'k' } };
  it('keeps stored headers, and blank values, on the same origin', () => {
    expect(keptHeaders(stored, 'https://a.example.com/other', undefined)).toEqual({
      headers: stored.headers,
      dropped: [],
    });
    expect(keptHeaders(stored, 'https://a.example.com/mcp', { Authorization: null, 'X-New': 'n' })).toEqual({
      headers: { Authorization: 'Bearer kept', 'X-New': 'n' },
      dropped: [],
    });
  });
  it('drops them toward another origin, and refuses a blank value there or one with nothing stored', () => {
    for (const other of ['https://b.example.com/mcp', 'http://a.example.com/mcp', 'https://a.example.com:8443/mcp'])
      expect(keptHeaders(stored, other, undefined)).toEqual({ headers: {}, dropped: ['Authorization', 'X-Key'] });
    expect(keptHeaders(stored, 'https://b.example.com/mcp', { Authorization: 'Bearer typed' })).toEqual({
      headers: { Authorization: 'Bearer typed' },
      dropped: [],
    });
    expect(() => keptHeaders(stored, 'https://b.example.com/mcp', { Authorization: null })).toThrow(
      'header Authorization: enter its value again (stored credentials are only sent to https://a.example.com)',
    );
    expect(() => keptHeaders(stored, 'https://a.example.com/mcp', { 'X-Other': null })).toThrow(
      'header X-Other: enter a value',
    );
    expect(() => keptHeaders(null, 'https://a.example.com/mcp', { Authorization: null })).toThrow(KeptCredentialsError);
  });
});

describe('the rule for kept URL parts', () => {
  const stored = {
    url: `https://${URL_MASK}:${URL_MASK}@a.example.com/mcp?token=${URL_MASK}`,
    target: 'https://u:pw@a.example.com/mcp?token=tk',
  };
  it('keeps masked parts on the same origin, however it is spelled', () => {
    expect(keptUrl(stored, stored.url)).toBe(stored.target);
    expect(keptUrl(stored, `HTTPS://${URL_MASK}:${URL_MASK}@A.EXAMPLE.COM:443/v2?token=${URL_MASK}`)).toBe(
      'https://u:pw@a.example.com/v2?token=tk',
    );
  });
  it('refuses them toward another host, scheme or port, and to a host hidden behind userinfo', () => {
    for (const other of [
      `https://${URL_MASK}:${URL_MASK}@evil.example.net/mcp?token=${URL_MASK}`,
      `http://${URL_MASK}:${URL_MASK}@a.example.com/mcp?token=${URL_MASK}`,
      `https://${URL_MASK}:${URL_MASK}@a.example.com:8443/mcp?token=${URL_MASK}`,
      // The host is the part after the last `@`: evil.example.net, with "a.example.com" in the password.
      `https://${URL_MASK}:${URL_MASK}@a.example.com@evil.example.net/mcp`,
      `https://evil.example.net/mcp?token=${URL_MASK}&next=https://a.example.com/`,
    ])
      expect(() => keptUrl(stored, other), other).toThrow(/is only sent to https:\/\/a\.example\.com: give it again/);
  });
});

describe('openStore', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-openkeys-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('makes the embedded key beside the database when the environment has none, and refuses a bad key', async () => {
    const dataDir = join(dir, 'pgdata');
    const store = await openStore({ dataDir });
    try {
      expect(existsSync(join(dir, 'secret.key'))).toBe(true);
      expect(store.keyring?.source).toBe(`key file ${join(dir, 'secret.key')}`);
      expect(currentKeyring()).toBe(store.keyring);
    } finally {
      await store.close();
    }
    await expect(openStore({ dataDir, secretKey: { key: 'too-short' } })).rejects.toThrow(SecretKeyError);
  });
});

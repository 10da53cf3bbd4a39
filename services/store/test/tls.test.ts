// Postgres over TLS as configured from the environment or the URL: a private Postgres cluster on
// loopback with ssl=on and a certificate from a private CA (initdb as the postgres user when run
// as root). verify-full with DATABASE_CA / PGSSLROOTCERT / sslrootcert connects and the whole
// store works; another CA, another host name and plaintext are refused; a client certificate
// (DATABASE_CERT / DATABASE_KEY) logs in where pg_hba demands one.

import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controlEnv, parseEnv } from '@mcp-fleet/config';
import { makeTestCa, type TestCa } from '@mcp-fleet/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, getServer, openStore, postgresConnection, type Store, servers } from '../src';

const PG_BIN = process.env.MCP_FLEET_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const runnable = existsSync(join(PG_BIN, 'initdb'));
const asRoot = process.getuid?.() === 0;

async function freePort(): Promise<number> {
  const srv = createNetServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** Run a Postgres binary, as the postgres user when we are root (initdb refuses root). */
function pgRun(bin: string, args: string[]): string {
  const [cmd, argv] = asRoot
    ? ['runuser', ['-u', 'postgres', '--', join(PG_BIN, bin), ...args]]
    : [join(PG_BIN, bin), args];
  return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Postgres TLS as a verb's environment gives it (config's database settings). */
const tlsOf = (env: Record<string, string>) => parseEnv(controlEnv, env).database.tls;

describe.skipIf(!runnable)('Postgres over TLS', () => {
  let dir: string;
  let data: string;
  let ca: TestCa;
  let port: number;
  let started = false;
  const url = (user = 'postgres', host = '127.0.0.1', query = '') =>
    `postgres://${user}@${host}:${port}/postgres${query ? `?${query}` : ''}`;
  /** Only what each test names: the machine's PG* variables stay out of it. */
  const open = (databaseUrl: string, env: Record<string, string> = {}) => {
    const { password, tls } = parseEnv(controlEnv, env).database;
    return openStore({ databaseUrl, password, tls, keyring: null, poolSize: 2 });
  };
  const sslInUse = async (store: Store) => {
    const r = await store.db.execute(sql`select ssl from pg_stat_ssl where pid = pg_backend_pid()`);
    return (r as unknown as { rows: { ssl: boolean }[] }).rows[0]?.ssl;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcpfleet-pg-tls-'));
    ca = makeTestCa(dir);
    data = join(dir, 'data');
    if (asRoot) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      for (const f of [dir, ca.server.key, ca.server.cert, ca.ca]) chownSync(f, uid, gid);
    }
    chmodSync(ca.server.key, 0o600);
    pgRun('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync']);
    // TLS only over TCP; `fleet` logs in with a client certificate alone.
    writeFileSync(
      join(data, 'pg_hba.conf'),
      [
        'local all all trust',
        'hostssl all fleet 127.0.0.1/32 cert',
        'hostssl all all 127.0.0.1/32 trust',
        'hostnossl all all 0.0.0.0/0 reject',
        '',
      ].join('\n'),
    );
    port = await freePort();
    const options = [
      `-p ${port}`,
      '-c listen_addresses=127.0.0.1',
      `-c unix_socket_directories=${dir}`,
      '-c ssl=on',
      `-c ssl_cert_file=${ca.server.cert}`,
      `-c ssl_key_file=${ca.server.key}`,
      `-c ssl_ca_file=${ca.ca}`,
      '-c fsync=off',
    ].join(' ');
    pgRun('pg_ctl', ['-D', data, '-l', join(dir, 'postgres.log'), '-o', options, '-w', '-t', '30', 'start']);
    started = true;
    const setup = await open(url(), { DATABASE_CA: ca.ca });
    await setup.db.execute(sql`create role fleet login superuser`);
    await setup.close();
  }, 60_000);

  afterAll(async () => {
    if (started) pgRun('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('connects with verify-full and DATABASE_CA, and the store works over it', async () => {
    const store = await open(url(), { DATABASE_CA: ca.ca });
    try {
      expect(store.tls).toBe('verify-full');
      expect(await sslInUse(store)).toBe(true);
      await store.migrate();
      const server = await createServer(store.db, {
        name: 'over-tls',
        url: 'https://over-tls.example.com/mcp',
        intervalMs: 60_000,
        timeoutMs: 10_000,
      });
      expect((await getServer(store.db, server.id))?.name).toBe('over-tls');
      expect((await store.db.select().from(servers)).length).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('takes libpq settings from the URL or PGSSLMODE / PGSSLROOTCERT', async () => {
    for (const [u, env] of [
      [url('postgres', '127.0.0.1', `sslmode=verify-full&sslrootcert=${encodeURIComponent(ca.ca)}`), {}],
      [url(), { PGSSLMODE: 'verify-full', PGSSLROOTCERT: ca.ca }],
    ] as const) {
      const store = await open(u, env);
      try {
        expect(store.tls).toBe('verify-full');
        expect(await sslInUse(store)).toBe(true);
      } finally {
        await store.close();
      }
    }
  });

  it('refuses a certificate from another CA, another host name, and plaintext', async () => {
    await expect(open(url(), { DATABASE_CA: ca.otherCa })).rejects.toThrow(
      /^cannot connect to Postgres at 127\.0\.0\.1:\d+\/postgres: .*(certificate|self.signed)/,
    );
    // The certificate names 127.0.0.1 only: `localhost` is another name. (libpq's verify-ca, which
    // skips the name, is there for those who ask for it explicitly.)
    await expect(open(url('postgres', 'localhost'), { DATABASE_CA: ca.ca })).rejects.toThrow(
      /does not match|altnames|ECONNREFUSED/,
    );
    const verifyCa = await open(
      url('postgres', 'localhost', `uselibpqcompat=true&sslmode=verify-ca&sslrootcert=${encodeURIComponent(ca.ca)}`),
    ).catch((err: Error) => err);
    if (verifyCa instanceof Error)
      expect(verifyCa.message).toMatch(/ECONNREFUSED/); // where localhost is not 127.0.0.1
    else await verifyCa.close();
    await expect(open(url(), { PGSSLMODE: 'disable' })).rejects.toThrow(/no encryption|pg_hba/);
    await expect(open(url())).rejects.toThrow(/no encryption|pg_hba/);
  });

  it('logs in with a client certificate (DATABASE_CERT / DATABASE_KEY) where pg_hba demands one', async () => {
    const client = ca.client('fleet');
    const store = await open(url('fleet'), {
      DATABASE_CA: ca.ca,
      DATABASE_CERT: client.cert,
      DATABASE_KEY: client.key,
    });
    try {
      expect(await sslInUse(store)).toBe(true);
      const r = await store.db.execute(sql`select current_user as u`);
      expect((r as unknown as { rows: { u: string }[] }).rows[0]?.u).toBe('fleet');
    } finally {
      await store.close();
    }
    await expect(open(url('fleet'), { DATABASE_CA: ca.ca })).rejects.toThrow(/certificate/);
  });

  it('names a missing certificate file instead of failing later', async () => {
    await expect(open(url(), { DATABASE_CA: join(dir, 'missing.crt') })).rejects.toThrow(
      `cannot read the Postgres TLS CA certificate ${join(dir, 'missing.crt')} (sslrootcert): ENOENT`,
    );
  });
});

describe('postgresConnection', () => {
  it('adds the environment where the URL says nothing, and says which mode results', () => {
    const base = 'postgres://u:p@db.internal:5432/fleet';
    expect(postgresConnection(base, tlsOf({}))).toEqual({ url: base, tls: 'off' });
    expect(postgresConnection(`${base}?sslmode=require`, tlsOf({}))).toEqual({
      url: `${base}?sslmode=require`,
      tls: 'require',
    });
    expect(postgresConnection(base, tlsOf({ PGSSLMODE: 'no-verify' }))).toEqual({
      url: `${base}?sslmode=no-verify`,
      tls: 'no-verify',
    });
    // Certificate files alone mean verify-full; the URL's own settings win over the environment.
    const withCa = postgresConnection(base, tlsOf({ DATABASE_CA: '/dev/null' }));
    expect(withCa.tls).toBe('verify-full');
    expect(new URL(withCa.url).searchParams.get('sslrootcert')).toBe('/dev/null');
    const own = postgresConnection(
      `${base}?sslmode=disable`,
      tlsOf({ DATABASE_CA: '/dev/null', PGSSLMODE: 'verify-full' }),
    );
    expect(own.tls).toBe('off');
  });
});

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createTcpServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { controlEnv, parseEnv } from '@mcp-fleet/config';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createServer,
  EMBEDDED_SHARED_BUFFERS,
  getServerByName,
  MIGRATIONS_DIR,
  openStore,
  type Store,
  servers,
} from '../src';
import { ADMIN_URL, BACKENDS } from './backends';

const journal = JSON.parse(readFileSync(join(MIGRATIONS_DIR, 'meta', '_journal.json'), 'utf8')) as {
  entries: unknown[];
};

describe.each(BACKENDS)('opening the store on %s', (name, make) => {
  const backend = make();
  let store: Store;
  beforeAll(async () => {
    store = await backend.open();
  });
  afterAll(() => backend.dispose());

  it('applies the migrations twice without error, once each', async () => {
    expect(store.kind).toBe(name);
    await store.migrate();
    await store.migrate();
    const applied = await store.db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`);
    // Db is typed over both drivers, so a raw result is `unknown`; both drivers answer with `rows`.
    expect((applied as { rows: unknown[] }).rows[0]).toEqual({ n: journal.entries.length });
    expect(await store.db.select().from(servers)).toEqual([]);
  });

  it('finds /migrations whatever the working directory', async () => {
    const cwd = process.cwd();
    process.chdir(tmpdir());
    try {
      await store.migrate();
    } finally {
      process.chdir(cwd);
    }
  });
});

describe('the embedded database', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-persist-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps its data in the directory across restarts, creating the directory if missing', async () => {
    const dataDir = join(dir, 'nested', 'pgdata');
    const first = await openStore({ dataDir });
    await first.migrate();
    await createServer(first.db, {
      name: 'kept',
      url: 'https://kept.example.com/mcp',
      intervalMs: 1000,
      timeoutMs: 500,
    });
    await first.close();
    await first.close(); // closing twice is harmless

    const second = await openStore({ dataDir });
    try {
      await second.migrate();
      expect(second.where).toBe(dataDir);
      expect((await getServerByName(second.db, 'kept'))?.url).toBe('https://kept.example.com/mcp');
    } finally {
      await second.close();
    }
  });

  it('says it is initialising on a first start, and how long it took; later starts say neither', async () => {
    const dataDir = join(dir, 'first', 'pgdata');
    const logs: string[] = [];
    const first = await openStore({ dataDir, log: (m) => logs.push(m) });
    expect(logs).toContain(`store: initialising the embedded database in ${dataDir} (first start)…`);
    await first.migrate();
    expect(logs.at(-1)).toMatch(/^store: database initialised in \d+\.\d s \(migrations applied\)$/);
    await first.close();

    const later: string[] = [];
    const second = await openStore({ dataDir, log: (m) => later.push(m) });
    await second.migrate();
    await second.close();
    expect(later.filter((m) => m.includes('initialis'))).toEqual([]);
    expect(later).toContain('store: migrations applied');
  });

  it('lets one process at a time open a directory, taking over a stale lock', async () => {
    const dataDir = join(dir, 'locked');
    const store = await openStore({ dataDir });
    try {
      await expect(openStore({ dataDir })).rejects.toThrow(
        `the embedded database in ${dataDir} is in use by this process`,
      );
    } finally {
      await store.close();
    }
    expect(existsSync(`${dataDir}.lock`)).toBe(false);

    // Another live process holds it.
    const other = spawn('sleep', ['30']);
    try {
      writeFileSync(`${dataDir}.lock`, JSON.stringify({ pid: other.pid, host: hostname() }));
      await expect(openStore({ dataDir })).rejects.toThrow(`is in use by process ${other.pid}`);
    } finally {
      other.kill();
      await once(other, 'exit');
    }
    // That process is gone now: its lock is stale.
    const logs: string[] = [];
    const again = await openStore({ dataDir, log: (m) => logs.push(m) });
    await again.close();
    expect(logs).toContain(`store: taking over a stale lock on ${dataDir}`);
  });

  it('keeps a small buffer pool unless told otherwise, on a first start and after', async () => {
    const dataDir = join(dir, 'buffers', 'pgdata');
    const shown = async (opts: { sharedBuffers?: string } = {}) => {
      const store = await openStore({ dataDir, ...opts });
      try {
        await store.migrate();
        const { rows } = (await store.db.execute(sql`show shared_buffers`)) as unknown as {
          rows: { shared_buffers: string }[];
        };
        return rows[0]?.shared_buffers;
      } finally {
        await store.close();
      }
    };
    expect(EMBEDDED_SHARED_BUFFERS).toBe('16MB');
    expect(await shown()).toBe('16MB'); // the first start: initialised in a helper process
    expect(await shown({ sharedBuffers: '32MB' })).toBe('32MB');
  });

  it('initialises a first start in a process that has ended by the time the store is open', async () => {
    const dataDir = join(dir, 'helper', 'pgdata');
    const before = new Set(childPids());
    const store = await openStore({ dataDir });
    try {
      expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
      // Applied by the helper already: nothing is left to apply here.
      const { rows } = (await store.db.execute(
        sql`select count(*)::int as n from drizzle.__drizzle_migrations`,
      )) as unknown as { rows: { n: number }[] };
      expect(rows[0]?.n).toBe(journal.entries.length);
      expect(childPids().filter((p) => !before.has(p))).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('names the directory when it cannot open it', async () => {
    const file = join(dir, 'not-a-directory');
    writeFileSync(file, 'x');
    await expect(openStore({ dataDir: join(file, 'pgdata') })).rejects.toThrow(
      `cannot open the embedded database in ${join(file, 'pgdata')}`,
    );
  });
});

describe('connection errors', () => {
  it('name the host and port of a Postgres nobody listens on', async () => {
    await expect(openStore({ databaseUrl: 'postgres://postgres@127.0.0.1:1/mcpfleet' })).rejects.toThrow(
      /^cannot connect to Postgres at 127\.0\.0\.1:1\/mcpfleet: .*ECONNREFUSED/,
    );
  });

  it('explain a dual-stack refusal (localhost) instead of an empty message', async () => {
    const err = await openStore({ databaseUrl: 'postgres://postgres@localhost:1/mcpfleet' }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/^cannot connect to Postgres at localhost:1\/mcpfleet: .*ECONNREFUSED/);
  });

  it('name a database that does not exist, and never print the password', async () => {
    const url = new URL(ADMIN_URL);
    url.username = 'postgres';
    url.password = 'hunter2-very-secret';
    url.pathname = '/mcpfleet_no_such_database';
    const err = (await openStore({ databaseUrl: url.toString() }).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(
      new RegExp(`^cannot connect to Postgres at ${url.hostname}:${url.port || 5432}/mcpfleet_no_such_database: `),
    );
    expect(err.message).toMatch(/does not exist/);
    expect(err.message).not.toContain('hunter2');
  });

  it('take the password of a URL without one from PGPASSWORD_FILE (a mounted secret), never printing it', async () => {
    // A Postgres that asks for a cleartext password, keeps it, and refuses the login: the machine's
    // own Postgres trusts every local login, so it could not tell which password was sent.
    const sent: string[] = [];
    const server = createTcpServer((socket) => {
      let startup = true;
      socket.on('data', (data) => {
        if (startup) {
          startup = false;
          socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3])); // AuthenticationCleartextPassword
          return;
        }
        if (data[0] === 0x70) sent.push(data.subarray(5, data.length - 1).toString('utf8')); // PasswordMessage
        const fields = Buffer.from('SFATAL\0C28P01\0Mpassword authentication failed\0\0');
        const header = Buffer.from([0x45, 0, 0, 0, 0]);
        header.writeInt32BE(fields.length + 4, 1);
        socket.end(Buffer.concat([header, fields]));
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const dir = mkdtempSync(join(tmpdir(), 'mcp-fleet-pgpass-'));
    try {
      const file = join(dir, 'PGPASSWORD');
      writeFileSync(file, 'from-the-file-s3cret\n', { mode: 0o600 });
      const err = (await openStore({
        databaseUrl: `postgres://mcpfleet@127.0.0.1:${port}/mcpfleet?sslmode=disable`,
        // As a verb parses its environment: PGPASSWORD_FILE read into the password.
        password: parseEnv(controlEnv, { PGPASSWORD_FILE: file }).database.password,
      }).catch((e: Error) => e)) as Error;
      expect(err.message).toMatch(
        /^cannot connect to Postgres at 127\.0\.0\.1:\d+\/mcpfleet: .*password authentication failed/,
      );
      expect(sent).toEqual(['from-the-file-s3cret']);
      expect(err.message).not.toContain('s3cret');
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** This process's children now (Linux /proc; none elsewhere). */
function childPids(): number[] {
  try {
    return readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

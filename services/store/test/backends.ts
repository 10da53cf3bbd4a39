// The two databases every store test runs against: a fresh Postgres database (dropped after)
// and PGlite in a temporary directory (removed after). No mocks.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_URL, admin, testKeyring } from '@mcp-fleet/testkit';
import { openStore, type Store, type StoreOptions } from '../src';

export { ADMIN_URL } from '@mcp-fleet/testkit';

export interface Backend {
  name: 'postgres' | 'pglite';
  /** A store over a fresh, empty database (PGlite: `firstStartMigrates: false` leaves it unmigrated). */
  open(extra?: Pick<StoreOptions, 'firstStartMigrates'>): Promise<Store>;
  /** Close the store and throw its database away. */
  dispose(): Promise<void>;
}

export function postgresBackend(): Backend {
  const name = `mcpfleet_test_${randomBytes(6).toString('hex')}`;
  let store: Store | undefined;
  return {
    name: 'postgres',
    async open() {
      await admin(`create database ${name}`);
      const url = new URL(ADMIN_URL);
      url.pathname = `/${name}`;
      store = await openStore({ databaseUrl: url.toString(), keyring: testKeyring() });
      return store;
    },
    async dispose() {
      await store?.close();
      await admin(`drop database if exists ${name} with (force)`);
    },
  };
}

export function pgliteBackend(): Backend {
  let dir: string | undefined;
  let store: Store | undefined;
  return {
    name: 'pglite',
    async open(extra) {
      dir = mkdtempSync(join(tmpdir(), 'mcpfleet-pglite-'));
      store = await openStore({ dataDir: join(dir, 'pgdata'), ...extra });
      return store;
    },
    async dispose() {
      await store?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** For `describe.each`: a backend is made (and its database created) only when a test file runs it. */
export const BACKENDS = [
  ['postgres', postgresBackend],
  ['pglite', pgliteBackend],
] as const;

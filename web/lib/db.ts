// Where the dashboard's data comes from. Inside `mcp-fleet up` it shares the process's database
// handle (embedded PGlite allows one process, so it cannot open its own); on its own (docker,
// bin/dashboard.js) it opens Postgres from DATABASE_URL (the settings its start was handed).
import 'server-only';
import { type Db, openStore } from '@mcp-fleet/store';
import { shared } from './shared';

export async function getDb(): Promise<Db> {
  const s = shared();
  if (s.db) return s.db;
  const databaseUrl = s.database?.url;
  if (!databaseUrl)
    throw new Error(
      'The dashboard reads the fleet from Postgres: set DATABASE_URL, or run it inside `mcp-fleet up`, which shares its database.',
    );
  s.opening ??= openStore({
    databaseUrl,
    password: s.database?.password,
    tls: s.database?.tls,
    secretKey: s.secretKey,
    poolSize: 5,
  }).catch((err) => {
    s.opening = undefined;
    throw err;
  });
  s.db = (await s.opening).db;
  return s.db;
}

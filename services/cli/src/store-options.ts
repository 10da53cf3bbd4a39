// How a verb opens the store from its role's settings: the database (URL, PGPASSWORD, TLS) and the
// secret key come from the parsed environment, the directory from --data-dir. One place, so
// `control` and `up` cannot open it differently.
import type { DatabaseSettings, SecretKeySettings } from '@mcp-fleet/config';
import type { StoreOptions } from '@mcp-fleet/store';

export function storeOptions(
  settings: { database: DatabaseSettings; secretKey: SecretKeySettings },
  /** The embedded database's directory (unset with a Postgres URL). */
  dataDir: string | undefined,
  log: (msg: string) => void,
): StoreOptions {
  const { url, password, tls } = settings.database;
  return { databaseUrl: url, password, tls, secretKey: settings.secretKey, dataDir, log };
}

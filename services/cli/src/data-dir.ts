// Where the embedded database lives: `--data-dir <dir>` (default ./.mcp-fleet) holds PGlite's
// directory (pgdata) and the key that seals stored credentials beside it (secret.key).
import { join } from 'node:path';
import { DEFAULT_DATA_DIR } from '@mcp-fleet/store';
import { UsageError } from './usage';

/** PGlite's directory for `--data-dir` (undefined with DATABASE_URL: Postgres has none). */
export function embeddedDataDir(flag: string | undefined, databaseUrl: string | undefined): string | undefined {
  if (databaseUrl) {
    if (flag !== undefined)
      throw new UsageError('--data-dir is for the embedded database, and DATABASE_URL is set: give one or the other');
    return undefined;
  }
  return flag === undefined ? DEFAULT_DATA_DIR : join(flag, 'pgdata');
}

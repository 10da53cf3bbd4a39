// What the dashboard's start hands its pages (its settings, parsed at the edge: `mcp-fleet up`, or
// serve.ts on its own), and `up`'s database handle. A global, not a module variable:
// Next bundles the app, so its copy of this module is not the one the CLI imported.
import type { DatabaseSettings, SecretKeySettings } from '@mcp-fleet/config';
import type { Db, Store } from '@mcp-fleet/store';

export interface Shared {
  db?: Db | undefined;
  opening?: Promise<Store> | undefined;
  /** Control's API, for what the dashboard changes (servers, tests) and asks (detection). */
  apiUrl?: string | undefined;
  /** The dashboard's token for control's API (server side only). */
  apiToken?: string | undefined;
  /** On its own: where to open Postgres (DATABASE_URL, its TLS) and the key ring's sources. */
  database?: DatabaseSettings | undefined;
  secretKey?: SecretKeySettings | undefined;
  /** MCP_FLEET_TRACE_URL: a trace UI link for runs (`{traceId}` replaced). */
  traceUrl?: string | undefined;
  /** The dashboard's own server sets the client's address header on every request (sign-in-budget.ts). */
  clientAddressHeader?: boolean | undefined;
}

const KEY = Symbol.for('mcp-fleet.web');

export function shared(): Shared {
  const g = globalThis as unknown as Record<symbol, Shared | undefined>;
  g[KEY] ??= {};
  return g[KEY];
}

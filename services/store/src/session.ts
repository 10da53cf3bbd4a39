// One Postgres session of its own, outside the pool: for what lives as long as a session does, such
// as a session-level advisory lock (control's scheduling lease). TCP keepalives on both ends, so a
// peer that vanished without closing its socket (a host down, a cable out) ends the session in
// seconds rather than in the kernel's two hours: the client notices a dead server, and the server
// (tcp_keepalives_* are the session's own settings) closes a dead client's session, releasing its locks.
import pg from 'pg';

/** What a session connection offers: queries in order on one backend, an error when it is lost, an end. */
export interface SessionConnection {
  query<R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    params?: unknown[],
  ): Promise<{ rows: R[] }>;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  /** A NOTIFY on a channel this session LISTENs on. */
  on(event: 'notification', listener: (msg: { channel: string; payload?: string | undefined }) => void): unknown;
  end(): Promise<void>;
}

/** Seconds: idle before the first probe, between probes, probes unanswered before the peer counts as gone (~11 s). */
export const SESSION_KEEPALIVE = { idleS: 5, intervalS: 2, count: 3 } as const;

export async function openSessionConnection(opts: {
  url: string;
  /** `off`: no TLS settings anywhere (pg must not read PGSSLMODE from another environment). */
  tls: string;
  /** A query that takes longer fails (the connection is probably gone): default 5 s. */
  queryTimeoutMs?: number;
}): Promise<SessionConnection> {
  const client = new pg.Client({
    connectionString: opts.url,
    ...(opts.tls === 'off' ? { ssl: false } : {}),
    keepAlive: true,
    keepAliveInitialDelayMillis: SESSION_KEEPALIVE.idleS * 1000,
    connectionTimeoutMillis: 5_000,
    query_timeout: opts.queryTimeoutMs ?? 5_000,
    application_name: 'mcp-fleet session',
  });
  // Until the caller listens: a lost connection must not crash the process.
  client.on('error', () => {});
  try {
    await client.connect();
    const { idleS, intervalS, count } = SESSION_KEEPALIVE;
    await client.query(
      `select set_config('tcp_keepalives_idle', $1, false), set_config('tcp_keepalives_interval', $2, false),
        set_config('tcp_keepalives_count', $3, false)`,
      [String(idleS), String(intervalS), String(count)],
    );
  } catch (err) {
    await client.end().catch(() => {});
    throw err;
  }
  return client as unknown as SessionConnection;
}

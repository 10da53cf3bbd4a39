// How a process dials NATS: the servers, its credentials (user and password, token, .creds file,
// TLS files), reconnecting forever, and replies under the user's own inbox prefix.
import { readFileSync } from 'node:fs';
import { type ConnectionOptions, credsAuthenticator } from '@nats-io/transport-node';

export interface NatsCredentials {
  user?: string;
  pass?: string;
  token?: string;
  /** A .creds file (JWT + NKey seed). */
  credsFile?: string;
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
}

export interface NatsConnectOptions extends NatsCredentials {
  /** One URL or several, comma-separated. */
  servers: string;
  /** Connection name shown by the server (`nats server report connections`). */
  name?: string;
}

export function natsConnectionOptions(opts: NatsConnectOptions): ConnectionOptions {
  const options: ConnectionOptions = {
    servers: opts.servers
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    name: opts.name ?? 'mcp-fleet',
    // Reconnect forever: an agent or control outlives any NATS restart.
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
    pingInterval: 10_000,
    // Every request (each job published, each result published, each ack confirmed) otherwise makes
    // two Error objects up front only to carry its caller's stack should it fail: at 1,000 jobs/s that
    // was a tenth of control's and an agent's CPU (bench:pipeline's profiles). A failed request still
    // rejects with its error and message (what we log); only the stack of the await is gone.
    noAsyncTraces: true,
  };
  if (opts.user !== undefined) options.user = opts.user;
  // Replies (JetStream acks, pulled messages, API answers) come to inboxes under the user's own
  // prefix, so a NATS user may subscribe to its own replies only (`_INBOX.<user>.>` in deploy/nats)
  // and never to another user's: jobs carry credentials to the agents of each region.
  if (opts.user !== undefined && /^[A-Za-z0-9_-]+$/.test(opts.user)) options.inboxPrefix = `_INBOX.${opts.user}`;
  if (opts.pass !== undefined) options.pass = opts.pass;
  if (opts.token !== undefined) options.token = opts.token;
  if (opts.credsFile) {
    const file = opts.credsFile;
    options.authenticator = credsAuthenticator(() => readFileSync(file));
  }
  if (opts.tls && (opts.tls.caFile || opts.tls.certFile || opts.tls.keyFile)) {
    options.tls = { ...opts.tls };
  }
  return options;
}

// Whether the connection to NATS is up, and requests that know it: one sent while NATS is away
// waits for it to come back (briefly), one in flight when it goes fails at once, so its caller can
// retry instead of waiting out the client's timeout.

import type { Logger } from '@mcp-fleet/log';
import type { NatsConnection } from '@nats-io/transport-node';

/** Server URLs in logs lose any user:password@. */
const withoutUserInfo = (url: string) => url.replace(/\/\/[^@/]*@/, '//');

/**
 * Whether the connection is up. The client discards what it buffered while disconnected when it
 * dials again, so a request sent while NATS is away (or in flight when it went) is never answered:
 * left alone it would fail only at its timeout (5 s), long after the client is back, and hold up
 * its caller (the scheduler's tick) all that time.
 */
export interface Link {
  up: boolean;
  /** Called when the connection drops (or closes). */
  readonly dropped: Set<() => void>;
  /** Called when it is back. */
  readonly restored: Set<() => void>;
}

/** How long a publish waits for a lost connection to come back before it fails (the client's request timeout). */
const RECONNECT_WAIT_MS = 5_000;

/**
 * Run a request on a live connection: wait (at most RECONNECT_WAIT_MS) for a lost one to come back
 * first, and fail at once if the connection drops before the answer, so the caller can retry (a job's
 * message id makes a retry safe; a result published twice is one run, by ingest's unique job id).
 */
export async function whileConnected<T>(link: Link, request: () => Promise<T>): Promise<T> {
  if (!link.up) {
    await new Promise<void>((resolve, reject) => {
      const back = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        link.restored.delete(back);
        reject(new Error('NATS is disconnected; reconnecting'));
      }, RECONNECT_WAIT_MS);
      timer.unref?.();
      link.restored.add(back);
    });
  }
  return new Promise<T>((resolve, reject) => {
    const drop = () => reject(new Error('NATS disconnected before the request was answered'));
    link.dropped.add(drop);
    request()
      .then(resolve, reject)
      .finally(() => link.dropped.delete(drop));
  });
}

/** Track the connection; one log line per change, never the credentials in a server URL. */
export function watchConnection(nc: NatsConnection, log: Logger, onDrop: () => void): Link {
  const link: Link = { up: true, dropped: new Set(), restored: new Set() };
  const notify = (listeners: Set<() => void>) => {
    for (const listener of [...listeners]) {
      listeners.delete(listener);
      listener();
    }
  };
  void (async () => {
    for await (const status of nc.status()) {
      const server =
        'server' in status && typeof status.server === 'string' ? withoutUserInfo(status.server) : undefined;
      if (status.type === 'disconnect' || status.type === 'close') {
        link.up = false;
        onDrop();
        notify(link.dropped);
        if (status.type === 'disconnect') log.warn({ server }, 'NATS disconnected; reconnecting');
      } else if (status.type === 'reconnect') {
        link.up = true;
        notify(link.restored);
        log.info({ server }, 'NATS reconnected');
      } else if (status.type === 'error') log.warn({ error: String(status.error) }, 'NATS error');
    }
  })();
  return link;
}

import { and, eq, isNotNull, isNull, or } from 'drizzle-orm';
import { servers, tests } from './schema';

/**
 * The tests shown with a server (join condition): a live server's live tests, a retired server's
 * tests retired with it (retireServer stamps both with the same time), not those retired before.
 */
export const shownTests = and(
  eq(tests.serverId, servers.id),
  or(isNull(tests.retiredAt), and(isNotNull(servers.retiredAt), eq(tests.retiredAt, servers.retiredAt))),
);

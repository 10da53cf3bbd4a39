// What agents say they start (issue 20), per region: only live agents count, a late heartbeat
// changes nothing it reported, and an agent from before stdio (no list) allows nothing. On both
// backends (Postgres and PGlite), since jsonb_array_elements_text must hold on each.
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_STALE_AFTER_SECONDS, agents, type Store, stdioCommandsByRegion, upsertAgentHeartbeat } from '../src';
import { BACKENDS } from './backends';
import { minute } from './fixtures';

describe.each(BACKENDS)("agents' stdio commands on %s", (_name, make) => {
  const backend = make();
  let store: Store;
  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
  });
  afterAll(() => backend.dispose());

  const beat = (id: string, region: string, at: number, stdioCommands?: string[]) =>
    upsertAgentHeartbeat(store.db, {
      id,
      region,
      version: '0.1.0',
      inFlight: 0,
      startedAt: minute(0),
      at: minute(at),
      stdioCommands,
    });

  it('lists per region the commands some live agent allows, each once', async () => {
    await beat('eu-1', 'eu-west', 1, ['node', '/usr/bin/node']);
    await beat('eu-2', 'eu-west', 1, ['node', 'uvx']);
    await beat('us-old', 'us-east', 1);
    expect(await stdioCommandsByRegion(store.db)).toEqual({ 'eu-west': ['/usr/bin/node', 'node', 'uvx'] });
  });

  it("keeps an agent's newest list against a late heartbeat, and forgets a stale agent's", async () => {
    await beat('eu-2', 'eu-west', 3, ['python3']);
    await beat('eu-2', 'eu-west', 2, ['uvx']);
    expect((await stdioCommandsByRegion(store.db))['eu-west']).toEqual(['/usr/bin/node', 'node', 'python3']);
    await store.db
      .update(agents)
      .set({ receivedAt: sql`now() - make_interval(secs => ${AGENT_STALE_AFTER_SECONDS + 1})` })
      .where(eq(agents.id, 'eu-1'));
    expect(await stdioCommandsByRegion(store.db)).toEqual({ 'eu-west': ['python3'] });
  });
});

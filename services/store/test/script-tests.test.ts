// Script tests in the store: the steps are kept with the test, listed for the scheduler, and a
// retired script test comes back only for the same script (jsonb equality: key order aside).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTest, lastRetiredTest, listActiveTests, retireTest, type Store } from '../src';
import { BACKENDS } from './backends';
import { serverWithTests } from './fixtures';

describe.each(BACKENDS)('script tests on %s', (_name, make) => {
  const backend = make();
  let store: Store;
  beforeAll(async () => {
    store = await backend.open();
    await store.migrate();
  });
  afterAll(() => backend.dispose());

  it('keeps the steps, lists them for the scheduler, and revives a test only for the same script', async () => {
    const { server } = await serverWithTests(store.db, []);
    const script = {
      steps: [{ method: 'tools/call', params: { name: 'echo', arguments: { text: 'a', lang: 'en' } } }],
    };
    const test = await createTest(store.db, { serverId: server.id, mode: 'newest', depth: 'script', script });
    const [active] = await listActiveTests(store.db, server.id);
    expect(active!.script).toEqual(script);
    await retireTest(store.db, test.id);
    const reordered = {
      steps: [{ params: { arguments: { lang: 'en', text: 'a' }, name: 'echo' }, method: 'tools/call' }],
    };
    expect((await lastRetiredTest(store.db, server.id, 'newest', null, 'script', reordered))?.id).toBe(test.id);
    const other = { steps: [{ method: 'tools/list' }] };
    expect(await lastRetiredTest(store.db, server.id, 'newest', null, 'script', other)).toBeNull();
    // A script test needs its steps; another depth has none.
    await expect(createTest(store.db, { serverId: server.id, mode: 'newest', depth: 'script' })).rejects.toThrow(
      /only a script test, has steps/,
    );
    await expect(
      createTest(store.db, { serverId: server.id, mode: 'newest', depth: 'surface', script: other }),
    ).rejects.toThrow(/only a script test, has steps/);
  });
});

// Applying a fleet with surface and script tests: two script tests of one revision are two tests,
// applying the same file again changes nothing, new steps are a new test (the old one retired),
// and the old steps back bring the old test back with its history.

import { scriptKey } from '@mcp-fleet/config';
import { applyFleet, parseFleet } from '@mcp-fleet/control';
import { listActiveTests, servers } from '@mcp-fleet/store';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestMonitor, type TestMonitor } from './support';

let m: TestMonitor;
beforeAll(async () => {
  m = await startTestMonitor('postgres+nats', [], { agents: false, interval: '60s' });
});
afterAll(async () => {
  await m?.close();
});

const fleet = (tests: string) =>
  parseFleet(
    `regions: [eu-west]\npolicy: { allow: ["127.0.0.0/8"] }\nservers:\n  - name: w\n    url: http://127.0.0.1:9/mcp\n    tests:\n${tests}`,
    'f.yaml',
    {},
  );
const script = (text: string) =>
  `      - revision: newest\n        depth: script\n        steps:\n          - { method: tools/call, params: { name: echo, arguments: { text: ${text} } } }\n`;

describe('applying script and surface tests', () => {
  it('keys script tests by their steps: the same file changes nothing, new steps retire the old test, old steps revive it', async () => {
    const paris = { steps: [{ method: 'tools/call', params: { name: 'echo', arguments: { text: 'Paris' } } }] };
    const first = fleet(`      - { revision: newest, depth: surface }\n${script('Paris')}${script('Oslo')}`);
    expect(await applyFleet(m.store.db, first)).toMatchObject({ created: ['w'], testsCreated: 3 });
    expect(await applyFleet(m.store.db, first)).toMatchObject({ unchanged: ['w'], testsCreated: 0, testsRetired: 0 });
    const [w] = await m.store.db.select().from(servers).where(eq(servers.name, 'w'));
    const before = await listActiveTests(m.store.db, w!.id);
    expect(before.map((t) => t.depth).sort()).toEqual(['script', 'script', 'surface']);
    const parisTest = before.find((t) => JSON.stringify(t.script) === JSON.stringify(paris))!;

    const second = await applyFleet(
      m.store.db,
      fleet(`      - { revision: newest, depth: surface }\n${script('Rome')}${script('Oslo')}`),
    );
    expect(second).toMatchObject({ testsCreated: 1, testsRetired: 1 });
    expect(second.changes.w).toEqual(
      expect.arrayContaining([
        `test newest (script ${scriptKey(paris)}) retired`,
        expect.stringMatching(/^test newest \(script [0-9a-f]{12}\) added$/),
      ]),
    );

    const third = await applyFleet(m.store.db, first);
    expect(third.changes.w).toEqual(expect.arrayContaining([`test newest (script ${scriptKey(paris)}) revived`]));
    const after = await listActiveTests(m.store.db, w!.id);
    expect(after.map((t) => t.testId)).toContain(parisTest.testId);
  });
});

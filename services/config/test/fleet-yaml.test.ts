import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fleetToYaml, parseFleet } from '../src';

describe('fleetToYaml', () => {
  it('writes the object as YAML that reads back the same, values that look like numbers or dates kept as strings', () => {
    const fleet = {
      regions: ['eu-west', 'us-east'],
      defaults: { interval: '2s', timeout: '1500ms' },
      servers: [
        {
          name: 'orders',
          url: 'http://127.0.0.1:4100/mcp?x=1&y=#frag',
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a fleet file's reference, written as is
          headers: { Authorization: 'Bearer ${ORDERS_TOKEN}', 'X-Note': 'a: b # not a comment' },
          tests: [{ revision: 'newest' }, { revision: '2025-03-26' }],
          detection: { interval: '2m' },
        },
        { name: '10', url: 'http://127.0.0.1:4101/mcp' },
      ],
      policy: { allow: ['127.0.0.0/8'] },
    };
    const text = fleetToYaml(fleet, { comment: 'a test fleet\non two lines' });
    expect(text.startsWith('# a test fleet\n# on two lines\n')).toBe(true);
    expect(parse(text)).toEqual(fleet);
  });
});

describe('fleetToYaml and the fleet file reader', () => {
  it('agree: what the writer writes, the reader takes as the same fleet', () => {
    const text = fleetToYaml({
      regions: ['eu-west', 'us-east'],
      defaults: { interval: '2s', timeout: '1500ms' },
      servers: [
        {
          name: 'orders',
          url: 'http://127.0.0.1:4100/mcp',
          headers: { 'X-Note': 'a: b # not a comment' },
          regions: ['eu-west'],
          tests: [
            { revision: 'newest' },
            { revision: '2025-03-26' },
            { revision: 'newest', depth: 'conformance', interval: '30m' },
          ],
          detection: { interval: '2m' },
        },
      ],
      policy: { allow: ['127.0.0.0/8'] },
    });
    const fleet = parseFleet(text, 'written');
    expect(fleet.regions).toEqual(['eu-west', 'us-east']);
    expect(fleet.policy.allow).toEqual(['127.0.0.0/8']);
    expect(fleet.servers).toHaveLength(1);
    const [orders] = fleet.servers;
    expect(orders).toMatchObject({
      name: 'orders',
      url: 'http://127.0.0.1:4100/mcp',
      headers: { 'X-Note': 'a: b # not a comment' },
      regions: ['eu-west'],
      intervalMs: 2_000,
      timeoutMs: 1_500,
      detectionIntervalMs: 120_000,
    });
    expect(orders!.tests).toEqual([
      { mode: 'newest', pinnedRevision: null, depth: 'handshake', intervalMs: null, script: null },
      { mode: 'pinned', pinnedRevision: '2025-03-26', depth: 'handshake', intervalMs: null, script: null },
      { mode: 'newest', pinnedRevision: null, depth: 'conformance', intervalMs: 1_800_000, script: null },
    ]);
  });
});

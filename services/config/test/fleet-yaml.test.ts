import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fleetToYaml } from '../src';

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

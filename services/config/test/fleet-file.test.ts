// The fleet file: what it accepts, and errors that name the file, the line and the field.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CONFORMANCE_INTERVAL_MS,
  DEFAULT_JUDGEMENT,
  effectiveIntervalMs,
  expandFleetFile,
  FleetFileError,
  fleetFromObject,
  loadFleetFile,
  PROBE_OWNED_HEADERS,
  parseFleet,
} from '../src';

const EXAMPLE = `regions: [eu-west, us-east]          # where agents run; a server may list a subset
defaults: { interval: 60s, timeout: 10s }
servers:
  - name: orders
    url: https://orders.example.com/mcp
    headers: { Authorization: "Bearer \${ORDERS_TOKEN}" }   # values from the environment
    regions: [eu-west]
    tests:
      - revision: newest
      - revision: "2025-06-18"                              # pinned
    detection: { interval: 15m }
  - name: local
    url: http://10.20.1.5:8080/mcp
policy:
  allow: ["10.20.0.0/16"]   # address ranges beyond the public internet that probes may reach
`;

function problems(text: string, env: Record<string, string> = {}): string[] {
  try {
    parseFleet(text, 'fleet.yaml', env);
  } catch (err) {
    if (err instanceof FleetFileError) return err.problems;
    throw err;
  }
  return [];
}

describe('the fleet file', () => {
  it('reads the example of issue 3, with headers from the environment', () => {
    const fleet = parseFleet(EXAMPLE, 'fleet.yaml', { ORDERS_TOKEN: 's3cret' });
    expect(fleet.regions).toEqual(['eu-west', 'us-east']);
    expect(fleet.policy).toEqual({ allow: ['10.20.0.0/16'], deny: [], schemes: ['http', 'https'] });
    expect(fleet.servers[0]).toEqual({
      name: 'orders',
      url: 'https://orders.example.com/mcp',
      command: null,
      headers: { Authorization: 'Bearer s3cret' },
      regions: ['eu-west'],
      intervalMs: 60_000,
      timeoutMs: 10_000,
      detectionIntervalMs: 900_000,
      tests: [
        { mode: 'newest', pinnedRevision: null, depth: 'handshake', intervalMs: null, script: null },
        { mode: 'pinned', pinnedRevision: '2025-06-18', depth: 'handshake', intervalMs: null, script: null },
      ],
      // No judgement key anywhere in the file: the built-in defaults.
      judgement: DEFAULT_JUDGEMENT,
    });
    expect(fleet.servers[1]).toMatchObject({
      regions: null,
      tests: [{ mode: 'newest', pinnedRevision: null, depth: 'handshake', intervalMs: null, script: null }],
      detectionIntervalMs: null,
    });
  });

  it('names the line and field of each problem', () => {
    const bad = `regions: [eu-west]
servers:
  - name: a
    url: ftp://x.example.com/
    tests:
      - revision: "2030-01-01"
  - name: a
    url: https://b.example.com/mcp
    regions: [mars]
    interval: soon
`;
    expect(problems(bad)).toEqual(
      expect.arrayContaining([
        'fleet.yaml:4:10: servers[0].url: an http:// or https:// URL',
        expect.stringMatching(/^fleet\.yaml:6:19: servers\[0\]\.tests\[0\]\.revision: newest or one of 2024-11-05/),
        expect.stringMatching(/^fleet\.yaml:10:15: servers\[1\]\.interval: a duration like/),
      ]),
    );
  });

  it('refuses loopback and private addresses unless policy.allow covers them', () => {
    const text = (allow: string) => `servers:
  - name: local
    url: http://127.0.0.1:7404/mcp
policy: { allow: [${allow}] }
`;
    expect(problems(text(''))).toEqual([
      'fleet.yaml:3:10: servers[0].url: 127.0.0.1 is loopback, private or link-local and policy.allow does not cover it',
    ]);
    expect(problems(text('"127.0.0.0/8"'))).toEqual([]);
    expect(problems(`servers:\n  - name: meta\n    url: http://169.254.169.254/latest\n`)[0]).toMatch(
      /169\.254\.169\.254 is loopback, private or link-local/,
    );
    expect(problems(`servers:\n  - name: l\n    url: http://localhost:1/mcp\n`)[0]).toMatch(/loopback/);
    expect(
      problems(
        `servers:\n  - name: d\n    url: http://127.0.0.2/mcp\npolicy: { allow: ["127.0.0.0/8"], deny: ["127.0.0.2/32"] }\n`,
      )[0],
    ).toMatch(/denies/);
  });

  it('refuses schemes policy.schemes does not list, and metadata addresses a broad allow covers', () => {
    const https = 'servers:\n  - name: p\n    url: http://p.example.com/mcp\npolicy: { schemes: [https] }\n';
    expect(problems(https)).toEqual([
      'fleet.yaml:3:10: servers[0].url: the scheme http: is not one the policy allows (policy.schemes: https)',
    ]);
    expect(parseFleet(https.replace('http:', 'https:'), 'f', {}).policy.schemes).toEqual(['https']);
    expect(problems('policy: { schemes: [ftp] }\n')).toEqual(['fleet.yaml:1:21: policy.schemes[0]: http or https']);
    expect(problems('policy: { schemes: [] }\n')).toEqual(['fleet.yaml:1:20: policy.schemes: at least one scheme']);
    const meta = (allow: string) =>
      `servers:\n  - name: m\n    url: http://169.254.169.254/latest\npolicy: { allow: [${allow}] }\n`;
    expect(problems(meta('"0.0.0.0/0"'))[0]).toMatch(/needs an allow entry inside 169\.254\.0\.0\/16/);
    expect(problems(meta('"169.254.169.254/32"'))).toEqual([]);
  });

  it('reads aliases but refuses a billion laughs, dangling aliases and headers no request can carry', () => {
    expect(parseFleet('regions: &r [a, b]\ndefaults: { interval: 60s }\n', 'f', {}).regions).toEqual(['a', 'b']);
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (const k of 'bcdefghi')
      levels.push(
        `${k}: &${k} [${Array(9)
          .fill(`*${levels.length === 1 ? 'a' : String.fromCharCode(k.charCodeAt(0) - 1)}`)
          .join(',')}]`,
      );
    const started = Date.now();
    expect(problems(`${levels.join('\n')}\n`)).toEqual([expect.stringMatching(/alias count/)]);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(problems('regions: *nowhere\n')).toEqual([expect.stringMatching(/^fleet\.yaml: Unresolved alias/)]);
    const header = (h: string) => `servers:\n  - name: h\n    url: https://h.example.com/\n    headers: { ${h} }\n`;
    expect(problems(header('"X-A": "a\\0b"'))[0]).toMatch(
      /^fleet\.yaml:4:23: servers\[0\]\.headers\.X-A: a header value without control/,
    );
    expect(problems(header('"X A": "b"'))[0]).toMatch(/a header name/);
    expect(problems(header(`"X-A": "\${CRLF}"`), { CRLF: 'a\r\nInjected: 1' })[0]).toMatch(
      /the environment variable CRLF holds what a header value cannot carry/,
    );
  });

  it('keeps the timeout within the interval', () => {
    expect(
      problems('servers:\n  - name: x\n    url: https://x.example.com/\n    interval: 5s\n    timeout: 10s\n'),
    ).toEqual(['fleet.yaml:5:14: servers[0].timeout: at most the interval and at most 120s']);
  });

  it('says a file nested too deeply is that, once per line, not the parser stack overflowing', () => {
    const flow = `servers: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`;
    const block = Array.from({ length: 3_000 }, (_, i) => `${' '.repeat(i)}k:`).join('\n');
    expect(problems(flow)).toEqual([expect.stringMatching(/^fleet\.yaml:1:\d+: nested too deeply for a fleet file$/)]);
    expect(problems(block)).toHaveLength(1);
    expect(problems(block)[0]).toMatch(/^fleet\.yaml:\d+:\d+: nested too deeply for a fleet file$/);
  });

  it('runs tests and detections at most once a second (0s is not "never")', () => {
    const server = (extra: string) => `servers:\n  - name: x\n    url: https://x.example.com/\n${extra}`;
    expect(problems(server('    interval: 500ms\n    timeout: 100ms\n'))).toEqual([
      'fleet.yaml:4:15: servers[0].interval: at least 1s',
    ]);
    for (const interval of ['0s', '999ms'])
      expect(problems(server(`    detection: { interval: ${interval} }\n`))).toEqual([
        'fleet.yaml:4:28: servers[0].detection.interval: at least 1s',
      ]);
    expect(parseFleet(server('    detection: { interval: 1s }\n'), 'f', {}).servers[0]?.detectionIntervalMs).toBe(
      1_000,
    );
  });

  it('names a missing environment variable and never applies half a file', () => {
    expect(problems(EXAMPLE)).toEqual([
      'fleet.yaml:6:31: servers[0].headers.Authorization: the environment variable ORDERS_TOKEN is not set',
    ]);
  });

  it('rejects unknown keys, duplicates, regions outside the fleet and broken YAML', () => {
    expect(problems('servers:\n  - name: x\n    url: https://x.example.com/\n    colour: red\n')).toEqual([
      'fleet.yaml:4:5: servers[0]: unknown key `colour` (known here: name, url, command, args, env, cwd, headers, regions, interval, timeout, tests, detection, quorum, failAfter, confirmAfter, flapWindow, recheck, disagreementAfter, slo)',
    ]);
    expect(
      problems(
        'servers:\n  - name: x\n    url: https://x.example.com/\n    tests: [{revision: newest}, {revision: newest}]\n',
      )[0],
    ).toMatch(/listed twice/);
    expect(problems('servers: [\n')[0]).toMatch(/^fleet\.yaml:2:1: /);
    expect(problems('- just\n- a list\n')).toEqual([
      'fleet.yaml:1:1: the file must be a mapping (regions, defaults, servers, policy)',
    ]);
  });

  // Issue 13 point 8: the messages the README promises.
  it('a misspelt key is one line that says what was meant', () => {
    expect(
      problems('servers:\n  - name: x\n    url: https://x.example.com/\n    tests:\n      - revison: newest\n'),
    ).toEqual(['fleet.yaml:5:9: servers[0].tests[0]: unknown key `revison`: did you mean `revision`?']);
    expect(problems('servers:\n  - nmae: x\n    url: https://x.example.com/\n')).toEqual([
      'fleet.yaml:2:5: servers[0]: unknown key `nmae`: did you mean `name`?',
    ]);
    expect(problems('region: [a]\nservers: []\n')).toEqual([
      'fleet.yaml:1:1: (file): unknown key `region`: did you mean `regions`?',
    ]);
    // A key that is simply missing says so, at its mapping.
    expect(problems('servers:\n  - name: x\n')).toEqual([
      'fleet.yaml:2:5: servers[0].url: give `url` (an HTTP server) or `command` (a stdio server)',
    ]);
  });

  it('a duration without its unit says to write one, such as 10s', () => {
    const server = (timeout: string) =>
      `servers:\n  - name: x\n    url: https://x.example.com/\n    timeout: ${timeout}\n`;
    expect(problems(server('10'))).toEqual([
      'fleet.yaml:4:14: servers[0].timeout: 10 has no unit: write a duration such as 10s (ms, s, m or h)',
    ]);
    expect(problems(server('"10"'))).toEqual([
      'fleet.yaml:4:14: servers[0].timeout: 10 has no unit: write a duration such as 10s (ms, s, m or h)',
    ]);
    expect(problems('defaults: { interval: 1.5 }\nservers: []\n')).toEqual([
      'fleet.yaml:1:23: defaults.interval: 1.5 has no unit: write a duration such as 1.5s (ms, s, m or h)',
    ]);
    expect(problems(server('[10s]'))).toEqual(['fleet.yaml:4:14: servers[0].timeout: expected text, not a list']);
  });

  it('a YAML syntax error gives its line and column', () => {
    expect(problems('servers:\n  - name: x\n  url: y\n')).toEqual([
      'fleet.yaml:3:1: All mapping items must start at the same column',
    ]);
    expect(problems('servers:\n  - name: "x\n')).toEqual([
      expect.stringMatching(/^fleet\.yaml:\d+:\d+: Missing closing "quote/),
    ]);
  });

  it('an empty file is explained, not applied as a fleet of no servers', () => {
    const empty =
      'fleet.yaml: the fleet is empty: it needs at least `servers:` (a list of servers; `servers: []` retires every server the file made) and may name `regions`, `defaults` and `policy`';
    for (const text of ['', '\n\n', '# nothing yet\n', '---\n', '{}\n']) expect(problems(text), text).toEqual([empty]);
    expect(() => fleetFromObject({}, 'sent')).toThrow(/sent: the fleet is empty/);
    // Saying it is how to mean it.
    expect(parseFleet('servers: []\n', 'f', {}).servers).toEqual([]);
  });

  it('says which file it could not read', async () => {
    await expect(loadFleetFile('/nonexistent/fleet.yaml', {})).rejects.toThrow(
      'invalid fleet definition, nothing applied:\n  /nonexistent/fleet.yaml: cannot read the file (ENOENT)',
    );
    const dir = await mkdtemp(join(tmpdir(), 'fleet-'));
    await writeFile(join(dir, 'f.yaml'), 'regions: [x]\n');
    await expect(loadFleetFile(join(dir, 'f.yaml'), {})).resolves.toMatchObject({ regions: ['x'], servers: [] });
  });

  it('refuses a Host header, and the other headers the probe owns, in any case', () => {
    const header = (h: string) => `servers:\n  - name: h\n    url: https://h.example.com/\n    headers: { ${h} }\n`;
    expect(problems(header('Host: evil.example.net'))).toEqual([
      'fleet.yaml:4:22: servers[0].headers.Host: Host is set by the probe itself, never by a fleet entry',
    ]);
    for (const name of [
      ...PROBE_OWNED_HEADERS,
      'HOST',
      'hOsT',
      'Transfer-Encoding',
      'Content-Length',
      'MCP-Protocol-Version',
    ])
      expect(problems(header(`"${name}": "x"`)), name).toEqual([expect.stringMatching(/is set by the probe itself/)]);
    // Credentials and other headers are the fleet's own.
    expect(problems(header('Authorization: "Bearer t", X-Host: h, Cookie: c'))).toEqual([]);
  });

  it('refuses a URL with a masked part (••••••): there is no stored credential for it to stand for', () => {
    expect(problems('servers:\n  - name: m\n    url: "https://h.example.com/mcp?token=••••••"\n')).toEqual([
      'fleet.yaml:3:10: servers[0].url: •••••• stands for a stored credential: give the value itself',
    ]);
  });
});

describe("a test's depth and interval", () => {
  const fleet = (tests: string) =>
    `servers:\n  - name: orders\n    url: https://orders.example.com/mcp\n    tests:\n${tests}`;

  it('a conformance test of newest beside the handshake one, its interval its own or 15m by default', () => {
    const [orders] = parseFleet(
      fleet(
        '      - revision: newest\n      - { revision: newest, depth: conformance }\n' +
          '      - { revision: "2025-06-18", depth: conformance, interval: 1h }\n      - { revision: "2025-03-26", interval: 5m }\n',
      ),
    ).servers;
    expect(orders!.tests).toEqual([
      { mode: 'newest', pinnedRevision: null, depth: 'handshake', intervalMs: null, script: null },
      { mode: 'newest', pinnedRevision: null, depth: 'conformance', intervalMs: null, script: null },
      { mode: 'pinned', pinnedRevision: '2025-06-18', depth: 'conformance', intervalMs: 3_600_000, script: null },
      { mode: 'pinned', pinnedRevision: '2025-03-26', depth: 'handshake', intervalMs: 300_000, script: null },
    ]);
    expect(orders!.tests.map((t) => effectiveIntervalMs(t, orders!.intervalMs))).toEqual([
      60_000,
      CONFORMANCE_INTERVAL_MS,
      3_600_000,
      300_000,
    ]);
    expect(CONFORMANCE_INTERVAL_MS).toBe(15 * 60_000);
  });

  it('refuses a depth it does not know, a bad interval, and the same revision twice at one depth (hostile file)', () => {
    const cases: [string, RegExp][] = [
      ['      - { revision: newest, depth: deep }\n', /tests\[0\]\.depth: handshake, conformance, surface or script/],
      ['      - { revision: newest, interval: -1s }\n', /tests\[0\]\.interval: a duration like/],
      ['      - { revision: newest, interval: 10 }\n', /tests\[0\]\.interval: 10 has no unit/],
      ['      - { revision: newest, interval: 500ms }\n', /tests\[0\]\.interval: at least 1s/],
      ['      - { revision: newest, interval: 9999h }\n', /at most 168h/],
      [
        `      - { revision: newest, depth: "${'x'.repeat(100_000)}" }\n`,
        /depth: handshake, conformance, surface or script/,
      ],
      // A run ends within its timeout before the next begins.
      [
        '      - { revision: newest, depth: conformance, interval: 5s }\n',
        /tests\[0\]\.interval: at least the server's timeout \(10s\)/,
      ],
      [
        '      - { revision: newest, depth: conformance }\n      - { revision: newest, depth: conformance, interval: 1h }\n',
        /a revision is listed twice at the same depth/,
      ],
      [
        '      - revision: newest\n      - { revision: newest, depth: handshake }\n',
        /a revision is listed twice at the same depth/,
      ],
      ['      - { revision: newest, dept: conformance }\n', /did you mean `depth`\?/],
    ];
    for (const [tests, problem] of cases) expect(problems(fleet(tests)).join('\n')).toMatch(problem);
  });
});

describe(`who expands \${NAME}: the reader of the file`, () => {
  const leak = `servers:\n  - name: x\n    url: https://x.example.com/\n    headers: { X-Leak: "\${HOME}", X-B: "a\${B}c" }\n`;

  it('a fleet with no reader environment (the API) refuses references, naming line and field', () => {
    // No env given: nothing is expanded, not even from this process's environment.
    expect(process.env.HOME).toBeDefined();
    expect(() => parseFleet(leak, 'sent')).toThrow(FleetFileError);
    try {
      parseFleet(leak, 'sent', 'refuse');
    } catch (err) {
      expect((err as FleetFileError).problems).toEqual([
        `sent:4:24: servers[0].headers.X-Leak: \${HOME} is not expanded by control: expand it where the file is read; \`mcp-fleet apply\` does`,
        `sent:4:40: servers[0].headers.X-B: \${B} is not expanded by control: expand it where the file is read; \`mcp-fleet apply\` does`,
      ]);
      expect((err as Error).message).not.toContain(process.env.HOME);
    }
  });

  it('the reader expands from its environment, and gets the object form to send', () => {
    expect(parseFleet(leak, 'f', { HOME: '/home/op', B: 'b' }).servers[0]!.headers).toEqual({
      'X-Leak': '/home/op',
      'X-B': 'abc',
    });
    const object = expandFleetFile(EXAMPLE, 'fleet.yaml', { ORDERS_TOKEN: `s3cret \${NOT_A_REF}` });
    expect(object.servers[0]!.headers).toEqual({ Authorization: `Bearer s3cret \${NOT_A_REF}` });
    // The object form reads back to the same definition, its values taken literally.
    expect(fleetFromObject(JSON.parse(JSON.stringify(object)), 'sent')).toEqual(
      parseFleet(EXAMPLE, 'fleet.yaml', { ORDERS_TOKEN: `s3cret \${NOT_A_REF}` }),
    );
    expect(() => expandFleetFile(EXAMPLE, 'fleet.yaml', {})).toThrow(
      'invalid fleet definition, nothing applied:\n  fleet.yaml:6:31: servers[0].headers.Authorization: the environment variable ORDERS_TOKEN is not set',
    );
  });

  it('the object form is checked like a file, field by field, and never expanded', () => {
    const fleet = fleetFromObject(
      { servers: [{ name: 'x', url: 'https://x.example.com/', headers: { 'X-Literal': `\${HOME}` } }] },
      'sent',
    );
    expect(fleet.servers[0]!.headers).toEqual({ 'X-Literal': `\${HOME}` });
    expect(() => fleetFromObject([], 'sent')).toThrow('sent: (file): expected a mapping (key: value), not a list');
    expect(() =>
      fleetFromObject({ servers: [{ name: 'x', url: 'ftp://x/', headers: { host: 'y' } }] }, 'sent'),
    ).toThrow(FleetFileError);
    try {
      fleetFromObject({ servers: [{ name: 'x', url: 'ftp://x/', headers: { host: 'y' } }] }, 'sent');
    } catch (err) {
      expect((err as FleetFileError).problems).toEqual([
        'sent: servers[0].url: an http:// or https:// URL',
        'sent: servers[0].headers.host: host is set by the probe itself, never by a fleet entry',
      ]);
    }
  });
});

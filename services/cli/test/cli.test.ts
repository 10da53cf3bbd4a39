// The mcp-fleet command as a user runs it: a child process, real targets, exit codes and output.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { DnsLookups, detect, guardedDispatcher, handshake, type Resolver, TargetPolicy } from '@mcp-fleet/probe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDetection } from '../src/commands/detect';
import { detectionExit, runExit } from '../src/exit-status';

const BIN = fileURLToPath(new URL('../bin/mcp-fleet.js', import.meta.url));

function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

let sim: Sim;
beforeAll(async () => {
  sim = await startSim();
});
afterAll(async () => {
  await sim.close();
});
const url = (name: string) => sim.target(name).url;

describe('mcp-fleet detect', () => {
  it('--json prints the detection object of DESIGN.md and exits 0 on DETECTED', async () => {
    const r = await run('detect', url('modern'), '--json');
    expect(r.code).toBe(0);
    const d = JSON.parse(r.stdout);
    expect(Object.keys(d).sort()).toEqual(
      [
        'cause',
        'millis',
        'newestSupported',
        'outcome',
        'requests',
        'retryAfterHeader',
        'revisions',
        'serverInfo',
      ].sort(),
    );
    expect(d.outcome).toBe('DETECTED');
    expect(d.cause).toBeNull();
    expect(d.newestSupported).toBe('2026-07-28');
    const unsupported = d.revisions.find((x: { supported: boolean }) => !x.supported);
    expect(Object.keys(unsupported.evidence).sort()).toEqual(
      [
        'bodyPreview',
        'contentType',
        'jsonRpcErrorCode',
        'jsonRpcErrorMessage',
        'message',
        'millis',
        'reachabilityFailure',
        'status',
      ].sort(),
    );
  });

  it('prints the Revision | Generation | Result | Note table with evidence', async () => {
    const r = await run('detect', url('sessions-2025-03-26'));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Revision\s+Generation\s+Result\s+Note/);
    expect(r.stdout).toMatch(/2025-03-26\s+sessions\s+Supported\s+not the current revision/);
    expect(r.stdout).toMatch(/2026-07-28\s+stateless\s+Not supported\s+current/);
    expect(r.stdout).toMatch(/\n {2}└ HTTP 400 · \d+ ms · JSON-RPC -32000 Bad Request: Server not initialized\n/);
    expect(r.stdout).toMatch(
      /\n {2}└ HTTP 200, text\/event-stream · \d+ ms · The server answered with protocol 2025-03-26 instead/,
    );
  });

  it('a server between generations (SDK 1.10): 2024-11-05 Supported, its note naming Streamable HTTP', async () => {
    const r = await run('detect', url('between-generations'));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('newest supported 2024-11-05 · server between-generations 1.10.2');
    expect(r.stdout).toMatch(
      /2024-11-05\s+HTTP\+SSE transport\s+Supported\s+deprecated; spoken over Streamable HTTP \(the sessions opening\)\n/,
    );
    expect(r.stdout).toMatch(/2025-03-26\s+sessions\s+Not supported\s+not the current revision/);
    const pinned = await run('handshake', url('between-generations'), '--revision', '2024-11-05', '--json');
    expect(pinned.code).toBe(0);
    expect(JSON.parse(pinned.stdout)).toMatchObject({
      requested: '2024-11-05',
      negotiated: '2024-11-05',
      generation: 'sessions',
      era: 'legacy',
      outcome: 'success',
      assertion: null,
    });
  });

  it('exits 1 on NONE and 3 on RATE_LIMITED, with the editor sentences', async () => {
    const none = await run('detect', url('website'));
    expect(none.code).toBe(1);
    expect(none.stdout).toContain('This URL did not identify itself as an MCP server on any revision.');
    const limited = await run('detect', url('rate-limited'));
    expect(limited.code).toBe(3);
    expect(limited.stdout).toContain('The server rate-limited the detection (HTTP 429); try again later.');
  });

  it('sends --header credentials and never prints them', async () => {
    const r = await run('detect', url('bearer'), '--header', 'Authorization: Bearer not-the-token-77aa', '--json');
    expect(r.code).toBe(7);
    expect(r.stdout + r.stderr).not.toContain('not-the-token-77aa');
  });
});

describe('mcp-fleet handshake', () => {
  it('a pinned run that fails prints the assertion and exits 1', async () => {
    const r = await run('handshake', url('sessions-2025-03-26'), '--revision', '2025-06-18', '--json');
    expect(r.code).toBe(1);
    const run1 = JSON.parse(r.stdout);
    expect(run1.assertion).toEqual({
      name: 'mcp.protocol.revision',
      expected: '2025-06-18',
      actual: '2025-03-26',
      message: 'Server does not speak protocol 2025-06-18',
    });
    for (const key of [
      'requested',
      'negotiated',
      'generation',
      'era',
      'outcome',
      'previousRevision',
      'requests',
      'millis',
      'serverInfo',
    ])
      expect(run1).toHaveProperty(key);
  });

  it('--current plays the remembered revision: an era move is a success', async () => {
    const r = await run('handshake', url('modern-only'), '--revision', 'newest', '--current', '2025-11-25');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('success: now 2026-07-28, was 2025-11-25');
    expect(r.stdout).toMatch(/Previous\s+2025-11-25/);
  });
});

describe('mcp-fleet bench handshake', () => {
  it('reports handshakes per second, p50/p99 and errors', async () => {
    const r = await run(
      'bench',
      'handshake',
      url('modern'),
      '--revision',
      '2026-07-28',
      '--seconds',
      '1',
      '--concurrency',
      '4',
      '--json',
    );
    expect(r.code).toBe(0);
    const b = JSON.parse(r.stdout);
    expect(b.operations).toBeGreaterThan(10);
    expect(b.errors).toBe(0);
    expect(b.perSecond).toBeGreaterThan(0);
    expect(b.p99Ms).toBeGreaterThanOrEqual(b.p50Ms);
  });
});

describe('bad arguments: a clear message, exit 2, never a stack trace', () => {
  const cases: [string, string[], RegExp][] = [
    ['no verb', [], /Usage:/],
    ['an unknown verb', ['frobnicate'], /unknown command "frobnicate"/],
    ['detect without a URL', ['detect'], /detect needs a URL/],
    ['a URL that is not one', ['detect', 'not a url'], /not a URL/],
    ['another scheme', ['detect', 'ftp://127.0.0.1/'], /must be http/],
    [
      'a header without a name',
      ['detect', 'http://127.0.0.1:9/', '--header', ': value'],
      /--header takes 'Name: value'/,
    ],
    [
      'a header name alone',
      ['detect', 'http://127.0.0.1:9/', '--header', 'Authorization'],
      /^mcp-fleet detect: --header 'Authorization': missing ':' and value/,
    ],
    [
      'an option without its value',
      ['detect', 'http://127.0.0.1:9/', '--timeout'],
      /^mcp-fleet detect: --timeout needs a value\n/,
    ],
    [
      'a value that looks like an option (an unbalanced quote swallowed the header)',
      ['detect', 'http://127.0.0.1:9/', '--header', '--json'],
      /^mcp-fleet detect: --header needs a value, and the next argument starts with "-"/,
    ],
    ['a flag given a value', ['detect', 'http://127.0.0.1:9/', '--json=yes'], /--json takes no value/],
    ['a bad timeout', ['detect', 'http://127.0.0.1:9/', '--timeout', '0'], /--timeout takes a whole number/],
    ['an unknown option', ['detect', 'http://127.0.0.1:9/', '--frob'], /^mcp-fleet detect: unknown option --frob\n/],
    ['an unknown option of secrets', ['secrets', 'init', '--frob'], /^mcp-fleet secrets: unknown option --frob\n/],
    [
      'an unknown revision',
      ['handshake', 'http://127.0.0.1:9/', '--revision', '2030-01-01'],
      /--revision takes one of/,
    ],
    ['handshake without --revision', ['handshake', 'http://127.0.0.1:9/'], /--revision is required/],
    [
      '--current on a pin',
      ['handshake', 'http://127.0.0.1:9/', '--revision', '2025-06-18', '--current', '2025-03-26'],
      /--current goes with/,
    ],
    ['bench of something else', ['bench', 'detect'], /bench takes "handshake"/],
    ['a bad sim port', ['sim', '--port', 'abc'], /--port takes a whole number/],
  ];
  it.concurrent.each(cases)('%s', async (_what, args, message) => {
    const r = await run(...args);
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    // One line of error, one pointing at the usage (the verb's own, when there is a verb).
    if (args.length > 0) {
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(2);
      expect(r.stderr).toMatch(
        args[0] === 'frobnicate' ? /\nsee mcp-fleet --help\n$/ : new RegExp(`\\nsee mcp-fleet ${args[0]} --help\\n$`),
      );
    }
  });
});

describe('the cause leads, with an exit code of its own (README: exit codes)', () => {
  // Every cause that a target on loopback can show. DNS is below (no name may be looked up here).
  const detections: [string, string[], number, RegExp][] = [
    ['a closed port', ['closed'], 4, /^Cause {4}unreachable: the connection was refused on every revision/m],
    [
      'HTTP 401',
      ['bearer'],
      7,
      /^Cause {4}auth required: HTTP 401 .*\n {9}Pass a credential .*--header 'Authorization: Bearer …'/m,
    ],
    ['HTTP 503', ['unavailable'], 8, /^Cause {4}server error: HTTP 503 /m],
    [
      'an expired certificate',
      ['hostile-tls-expired'],
      6,
      /^Cause {4}TLS: the certificate has expired \(CERT_HAS_EXPIRED\)/m,
    ],
    ['a self-signed certificate', ['hostile-tls-self-signed'], 6, /^Cause {4}TLS: the certificate is self-signed/m],
    ['no answer', ['silent', '--timeout', '300'], 9, /^Cause {4}timeout: no answer within \d+ ms/m],
  ];
  it.concurrent.each(detections)('detect, %s', async (_what, [name, ...flags], code, lead) => {
    const r = await run('detect', url(name!), ...flags);
    expect(r.code).toBe(code);
    // The cause comes before the outcome, and no revision claims "Not supported": nothing was learnt.
    expect(r.stdout).toMatch(lead);
    expect(r.stdout.indexOf('Cause')).toBeLessThan(r.stdout.indexOf('Outcome  NONE'));
    expect(r.stdout).not.toContain('did not identify itself');
    expect(r.stdout).not.toContain('Not supported');
    expect(r.stdout.match(/^\d{4}-\d\d-\d\d\s+\S.*?\s+unknown\s/gm)).toHaveLength(5);
  });

  // The detection's answer shape: docs/protocol.md#detection.
  it('detect --json: the seed shape, each revision supported: false with evidence, and a top-level cause', async () => {
    const r = await run('detect', url('bearer'), '--json');
    expect(r.code).toBe(7);
    const d = JSON.parse(r.stdout);
    expect(d).toMatchObject({ outcome: 'NONE', cause: 'auth_required' });
    for (const rev of d.revisions) expect(rev).toMatchObject({ supported: false, evidence: { status: 401 } });
  });

  it('detect: no single cause is exit 1, "not an MCP server", and revisions it answered about are "Not supported"', async () => {
    const r = await run('detect', url('website'));
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('This URL did not identify itself as an MCP server on any revision.');
    expect(r.stdout).not.toMatch(/^Cause/m);
    expect(r.stdout).toMatch(/2026-07-28\s+stateless\s+Not supported/);
  });

  it('detect: a 429 is exit 3 and its revisions are unknown', async () => {
    const r = await run('detect', url('rate-limited'));
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/2026-07-28\s+stateless\s+unknown/);
  });

  const runs: [string, string[], number, RegExp][] = [
    ['a closed port', ['closed'], 4, /^Outcome {5}unreachable\nCause {7}unreachable: the connection was refused\n/m],
    [
      'HTTP 401',
      ['bearer'],
      7,
      /^Outcome {5}auth_required\nCause {7}auth required: HTTP 401 \(the server asked for credentials\)\n/m,
    ],
    ['HTTP 503', ['unavailable'], 8, /^Cause {7}server error: HTTP 503 /m],
    ['an expired certificate', ['hostile-tls-expired'], 6, /^Cause {7}TLS: the certificate has expired/m],
    ['no answer', ['silent', '--timeout', '300'], 9, /^Cause {7}timeout: no answer within \d+ ms/m],
  ];
  it.concurrent.each(runs)('handshake, %s', async (_what, [name, ...flags], code, lead) => {
    const r = await run('handshake', url(name!), '--revision', 'newest', ...flags);
    expect(r.code).toBe(code);
    expect(r.stdout).toMatch(lead);
    expect(r.stdout).not.toContain('did not identify itself');
    // Counts agree with their nouns.
    expect(r.stdout).toMatch(/^Requests {4}1 request in \d+ ms$/m);
    expect(r.stdout).toMatch(/^Lookup {6}found nothing in 1 request$/m);
  });

  it('handshake: a pinned revision the server does not speak is exit 1', async () => {
    const r = await run('handshake', url('modern-only'), '--revision', '2025-06-18');
    expect(r.code).toBe(1);
  });

  it('a name that does not resolve: DNS, exit 5 (in process: no name may be looked up from a test)', async () => {
    // The child process would ask the network's DNS; here the system resolver's place is taken by
    // one that answers ENOTFOUND as getaddrinfo does for a name with no records (probe's cause.test.ts).
    const resolver: Resolver = (hostname, _options, callback) =>
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    const dispatcher = guardedDispatcher(
      new TargetPolicy({ allow: ['127.0.0.0/8'], deny: [] }),
      new DnsLookups({}, resolver),
    );
    try {
      const d = await detect('http://mcp.invalid.localhost:9/mcp', { dispatcher });
      expect(detectionExit(d)).toBe(5);
      expect(formatDetection('http://mcp.invalid.localhost:9/mcp', d)).toMatch(
        /^Cause {4}DNS: the host name could not be resolved \(ENOTFOUND\) on every revision/m,
      );
      const r = await handshake('http://mcp.invalid.localhost:9/mcp', { revision: 'newest', dispatcher });
      expect(runExit(r)).toBe(5);
    } finally {
      await dispatcher.close();
    }
  });
});

describe('--help, --version', () => {
  const verbs = [
    'detect',
    'handshake',
    'check',
    'record',
    'replay',
    'bench',
    'sim',
    'demo',
    'up',
    'control',
    'agent',
    'apply',
    'secrets',
  ];
  it.concurrent.each(verbs)('%s --help prints its usage and exits 0', async (verb) => {
    for (const flag of ['--help', '-h']) {
      const r = await run(verb, flag);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^Usage:\\n {2}mcp-fleet ${verb}\\b`));
      expect(r.stderr).toBe('');
    }
  });

  it('detect --help after other arguments too, with the exit codes', async () => {
    const r = await run('detect', 'http://127.0.0.1:9/', '--header', 'X: y', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}7 {3}auth required/m);
  });

  it('--version prints the version of package.json', async () => {
    const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8'));
    const r = await run('--version');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`mcp-fleet ${pkg.version}\n`);
  });
});

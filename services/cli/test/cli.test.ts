// The mcp-fleet command as a user runs it: a child process, real targets, exit codes and output.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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
      ['millis', 'newestSupported', 'outcome', 'requests', 'retryAfterHeader', 'revisions', 'serverInfo'].sort(),
    );
    expect(d.outcome).toBe('DETECTED');
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
    expect(r.code).toBe(1);
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
      ['detect', 'http://127.0.0.1:9/', '--header', 'novalue'],
      /--header takes 'Name: value'/,
    ],
    ['a bad timeout', ['detect', 'http://127.0.0.1:9/', '--timeout', '0'], /--timeout takes a whole number/],
    ['an unknown option', ['detect', 'http://127.0.0.1:9/', '--frob'], /Unknown option '--frob'/],
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
  });
});

// Scripted checks (seed 002) against the official SDK servers of fleet-sim, in both eras: a
// passing script, each kind of failing assertion, the write refusal and allowWrites, hostile
// patterns and paths from a fleet file, and a server that stops answering mid-script.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runScript, SCRIPT_MAX_STEPS, type Script, type ScriptRun } from '../src';
import { useSim } from './use-sim';

const fleet = useSim({ only: ['modern', 'sessions-2025-11-25', 'catalogue'] });
const url = (name: string) => fleet().target(name).url;

const echo = (text: string, expect: Script['steps'][number]['expect'] = []) => ({
  method: 'tools/call',
  params: { name: 'echo', arguments: { text } },
  expect,
});

const messages = (run: ScriptRun) => run.steps.map((s) => `${s.status}: ${s.message}`);

describe('a passing script', () => {
  it('runs every step in the modern era, each assertion kind holding', async () => {
    const run = await runScript(url('modern'), {
      protocol: '2026-07-28',
      script: {
        steps: [
          { method: 'tools/list', expect: [{ path: '$.tools[0].name', equals: 'echo' }] },
          echo('the weather in Paris is sunny', [
            { path: '$.content[0].text', contains: 'Paris' },
            { path: "$['content'][0]['type']", equals: 'text' },
            { path: '$.content[0].text', matches: '^the weather in [A-Z][a-z]+ is (sunny|rainy)$' },
            { path: '$.content', equals: [{ type: 'text', text: 'the weather in Paris is sunny' }] },
            { isError: false },
            { latencyMs: 5000 },
          ]),
        ],
      },
    });
    expect(messages(run)).toEqual(['pass: 1 assertion held', 'pass: 6 assertions held']);
    expect(run).toMatchObject({
      protocol: { requested: '2026-07-28', negotiated: '2026-07-28', era: 'modern' },
      pass: true,
      outcome: 'success',
      message: '2 of 2 steps passed',
    });
    expect(run.steps[1]).toMatchObject({ index: 1, method: 'tools/call', name: 'echo' });
    // The opening, the tool list read for the read-only check, and the two steps.
    expect(run.requests).toBe(4);
    const methods = fleet()
      .requests('modern')
      .map((r) => r.jsonRpcMethod);
    expect(methods).toEqual(['server/discover', 'tools/list', 'tools/list', 'tools/call']);
  });

  it('runs in a legacy session (2025-11-25, SSE answers): the same assertions read the whole answer', async () => {
    const run = await runScript(url('sessions-2025-11-25'), {
      protocol: '2025-11-25',
      script: {
        steps: [
          { method: 'tools/list', expect: [{ path: '$.tools[0].inputSchema.properties.text.type', equals: 'string' }] },
          { method: 'ping' },
        ],
      },
    });
    expect(messages(run)).toEqual(['pass: 1 assertion held', 'pass: answered']);
    expect(run).toMatchObject({
      pass: true,
      outcome: 'success',
      protocol: { negotiated: '2025-11-25', era: 'legacy' },
    });
  });
});

describe('failing assertions name the first that failed', () => {
  const failing = async (expect: Script['steps'][number]['expect']) => {
    const run = await runScript(url('modern'), { protocol: '2026-07-28', script: { steps: [echo('sunny', expect)] } });
    return run;
  };

  it.each([
    [[{ path: '$.content[0].text', equals: 'rainy' }], '$.content[0].text: expected "rainy", found "sunny"'],
    [[{ path: '$.content[0].text', contains: 'rain' }], '$.content[0].text: expected "sunny" to contain "rain"'],
    [
      [{ path: '$.content', contains: 'sunny' }],
      '$.content: expected the list [{"type":"text","text":"sunny"}] to contain "sunny"',
    ],
    [[{ path: '$.content[0].text', matches: '^rain' }], '$.content[0].text: expected "sunny" to match /"^rain"/'],
    [[{ isError: true }], 'isError: expected true, the answer says false'],
    [[{ latencyMs: 1 }, { isError: false }], /^latency: expected at most 1 ms, took \d+ ms$/],
    [[{ path: '$.structuredContent.city', equals: 'Paris' }], '$.structuredContent.city: nothing at this path'],
    [
      [
        { path: '$.content[0].type', equals: 'text' },
        { path: '$.content[1]', equals: {} },
      ],
      '$.content[1]: nothing at this path',
    ],
  ] as const)('%j', async (assertions, message) => {
    // latencyMs 1 may hold on a fast machine: ask for a latency no answer can have.
    const list = assertions.map((a) => ('latencyMs' in a ? { latencyMs: 1 } : a));
    const run = await failing(list as Script['steps'][number]['expect']);
    if ('latencyMs' in assertions[0] && run.pass) return; // answered within a millisecond: nothing to judge
    expect(run.pass).toBe(false);
    expect(run.outcome).toBe('protocol_error');
    expect(run.steps[0]!.status).toBe('fail');
    if (typeof message === 'string') expect(run.steps[0]!.message).toBe(message);
    else expect(run.steps[0]!.message).toMatch(message);
    expect(run.message).toContain('step 1 (tools/call echo) failed: ');
  });

  it('a JSON-RPC error fails its step with the code, and the next step still runs', async () => {
    const run = await runScript(url('modern'), {
      protocol: '2026-07-28',
      script: { steps: [{ method: 'prompts/get', params: { name: 'nope' } }, { method: 'tools/list' }] },
    });
    expect(run.steps[0]).toMatchObject({ status: 'fail', name: 'nope' });
    expect(run.steps[0]!.message).toMatch(/^JSON-RPC error -32\d+ /);
    expect(run.steps[1]!.status).toBe('pass');
    expect(run).toMatchObject({ pass: false, outcome: 'protocol_error' });
  });
});

describe('writes', () => {
  const upper = { method: 'tools/call', params: { name: 'upper', arguments: { text: 'paris' } } };

  it('refuses a tool the server does not mark readOnlyHint, sending nothing for it', async () => {
    const run = await runScript(url('catalogue'), { protocol: '2026-07-28', script: { steps: [upper] } });
    expect(run).toMatchObject({ pass: false, outcome: 'protocol_error' });
    expect(run.steps[0]).toMatchObject({ status: 'fail', name: 'upper' });
    expect(run.steps[0]!.message).toBe(
      'refused: tool upper is not marked readOnlyHint: true (set allowWrites: true on the test to call it)',
    );
    const methods = fleet()
      .requests('catalogue')
      .map((r) => r.jsonRpcMethod);
    expect(methods).not.toContain('tools/call');
    // Every page of the catalogue was read (it has five tools in three pages).
    expect(methods.filter((m) => m === 'tools/list')).toHaveLength(3);
  });

  it('refuses a tool the server does not list, and one in a legacy session without the hint', async () => {
    const unknown = await runScript(url('modern'), {
      protocol: '2026-07-28',
      script: { steps: [{ method: 'tools/call', params: { name: 'create_order', arguments: {} } }] },
    });
    expect(unknown.steps[0]!.message).toBe(
      "refused: tool create_order is not in the server's tool list, so it is not known to be read-only",
    );
    const legacy = await runScript(url('sessions-2025-11-25'), {
      protocol: '2025-11-25',
      script: { steps: [echo('x')] },
    });
    expect(legacy.steps[0]!.message).toMatch(/^refused: tool echo is not marked readOnlyHint/);
    expect(
      fleet()
        .requests()
        .map((r) => r.jsonRpcMethod),
    ).not.toContain('tools/call');
  });

  it('calls it when the script allows writes, without reading the tool list', async () => {
    const run = await runScript(url('catalogue'), {
      protocol: '2026-07-28',
      script: { allowWrites: true, steps: [{ ...upper, expect: [{ path: '$.content[0].text', equals: 'PARIS' }] }] },
    });
    expect(run).toMatchObject({ pass: true, outcome: 'success' });
    const methods = fleet()
      .requests('catalogue')
      .map((r) => r.jsonRpcMethod);
    expect(methods).toEqual(['server/discover', 'tools/call']);
  });
});

describe('a hostile fleet file', () => {
  it('a catastrophic pattern runs in linear time (RE2), and an unsupported one fails with RE2 words', async () => {
    // Within a step's params bound; a backtracking engine would not finish `^(a+)+$` on it.
    const long = 'a'.repeat(3_000);
    const started = Date.now();
    const run = await runScript(url('modern'), {
      protocol: '2026-07-28',
      script: {
        steps: [
          echo(`${long}!`, [{ path: '$.content[0].text', matches: '^(a+)+$' }]),
          echo(long, [{ path: '$.content[0].text', matches: '(a|aa)*(?=b)' }]),
          echo(long, [{ path: '$.content[0].text', matches: '(a{1000}){1000}' }]),
          echo('x', [{ path: '$.content[0].text', matches: 'x'.repeat(201) }]),
        ],
      },
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(run.steps.map((s) => s.status)).toEqual(['fail', 'fail', 'fail', 'fail']);
    expect(run.steps[0]!.message).toMatch(/^\$\.content\[0\]\.text: expected "a{20}.*to match/);
    expect(run.steps[1]!.message).toMatch(/not one RE2 accepts .*\(\?=/);
    expect(run.steps[2]!.message).toMatch(/not one RE2 accepts/);
    expect(run.steps[3]!.message).toMatch(/a pattern has at most 200 characters/);
    // Every message stays within a check's bound.
    for (const s of run.steps) expect(s.message.length).toBeLessThanOrEqual(300);
  });

  it('paths outside the subset are refused, never evaluated; prototype keys are not found', async () => {
    const paths = [
      '$..text',
      '$.content[?(@.type=="text")]',
      '$.content[*]',
      "$.content[0].constructor['constructor']('return process')()",
      'content[0]',
      '$.__proto__',
      '$.content[0].constructor',
    ];
    const run = await runScript(url('modern'), {
      protocol: '2026-07-28',
      script: { steps: paths.map((path) => echo('x', [{ path, equals: 'x' }])) },
    });
    const got = run.steps.map((s) => s.message);
    expect(got.slice(0, 5).every((m) => m.includes('not a path this version reads'))).toBe(true);
    expect(got[5]).toBe('$.__proto__: nothing at this path');
    expect(got[6]).toBe('$.content[0].constructor: nothing at this path');
  });

  it('a script over its bounds is refused before any request', async () => {
    const steps = Array.from({ length: SCRIPT_MAX_STEPS + 1 }, () => ({ method: 'ping' }));
    const run = await runScript(url('modern'), { protocol: '2026-07-28', script: { steps } });
    expect(run).toMatchObject({ pass: false, requests: 0, steps: [] });
    expect(run.message).toBe('the script is over its bounds: a script has at most 16 steps');
    expect(fleet().requests('modern')).toHaveLength(0);
  });

  it("the job's credentials never come back in a step's message, even echoed", async () => {
    const token = 'sk-live-0123456789abcdef';
    const run = await runScript(url('modern'), {
      protocol: '2026-07-28',
      headers: { Authorization: `Bearer ${token}` },
      script: { steps: [echo(`key=${token}`, [{ path: '$.content[0].text', equals: 'nope' }])] },
    });
    expect(run.steps[0]!.message).toBe('$.content[0].text: expected "nope", found "key=[redacted]"');
    expect(JSON.stringify(run)).not.toContain(token);
  });
});

describe('a server that cannot be talked to', () => {
  it('does not open: the opening outcome, every step skipped', async () => {
    const run = await runScript(url('sessions-2025-11-25'), { protocol: '2026-07-28', script: { steps: [echo('x')] } });
    expect(run.pass).toBe(false);
    expect(run.outcome).not.toBe('success');
    expect(run.steps).toEqual([
      {
        index: 0,
        method: 'tools/call',
        name: 'echo',
        status: 'skip',
        message: 'not run: the conversation did not open',
        millis: 0,
      },
    ]);
  });

  it('breaks mid-script: the step that met it fails with the transport failure, the rest are skipped', async () => {
    // A real SDK server behind a door that closes after the third request.
    const target = new URL(url('modern'));
    let seen = 0;
    const door: Server = createServer(async (req, res) => {
      seen += 1;
      if (seen > 3) return req.socket.destroy();
      const body: Buffer[] = [];
      for await (const chunk of req) body.push(chunk as Buffer);
      const answer = await fetch(target, {
        method: req.method,
        headers: Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => k === 'content-type' || k === 'accept' || k.startsWith('mcp-')),
        ) as Record<string, string>,
        body: Buffer.concat(body),
      });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await answer.arrayBuffer()));
    });
    await new Promise<void>((resolve) => door.listen(0, '127.0.0.1', resolve));
    try {
      const port = (door.address() as AddressInfo).port;
      const run = await runScript(`http://127.0.0.1:${port}/mcp`, {
        protocol: '2026-07-28',
        script: { steps: [echo('one'), echo('two'), echo('three'), echo('four')] },
      });
      expect(run.steps.map((s) => s.status)).toEqual(['pass', 'fail', 'skip', 'skip']);
      expect(run.steps[1]!.message).toMatch(/^tools\/call: /);
      expect(run.steps[2]!.message).toBe('not run: the server stopped answering at step 2');
      expect(run.outcome).toBe('unreachable');
      expect(run.pass).toBe(false);
    } finally {
      door.closeAllConnections();
      await new Promise((resolve) => door.close(resolve));
    }
  });
});

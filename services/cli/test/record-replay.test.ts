// mcp-fleet record and replay against real servers: the official SDK client talks through the
// recording proxy to fleet-sim's SDK targets (stateless 2026-07-28 with JSON answers, a 2025-11-25
// session with event-stream answers); the file keeps no credential; replaying it against the same
// server says `same`, against an SDK server whose answers gained a field `newer_equivalent`, and
// against one that lost its tool `broken` and `protocol_error`.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptRunSchema, ScriptSchema } from '@mcp-fleet/bus';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { parseSession, replaySession, runScript, type Session } from '@mcp-fleet/probe';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import * as z from 'zod';
import { listenAddress, RefusedTarget, scriptYaml, startRecorder } from '../src/commands/record';
import { main } from '../src/main';

const quiet = () => true;
const LOOPBACK = { allow: ['127.0.0.0/8'], deny: [], schemes: ['http'] };
const TOKEN = 'tok-9f8e7d6c5b4a39281706';
const COOKIE = 'sid=c00kie-value-77aa';
const API_KEY = 'key-0aa1bb2cc3dd4ee5';
const QUERY_KEY = 'q-secret-5566778899';
const PASSWORD = 'hunter2-but-longer';

let sim: Sim;
let dir: string;
beforeAll(async () => {
  sim = await startSim({ only: ['modern', 'sessions-2025-11-25'] });
  dir = mkdtempSync(join(tmpdir(), 'mcp-fleet-record-'));
});
afterAll(async () => {
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What an MCP client does through the proxy: open, list tools, call echo twice (once with secrets). */
async function converse(url: string, revision: '2026-07-28' | '2025-11-25'): Promise<void> {
  const client =
    revision === '2026-07-28'
      ? new Client({ name: 'recorder-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: revision } } })
      : new Client({ name: 'recorder-test', version: '1.0.0' }, { supportedProtocolVersions: [revision] });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}`, Cookie: COOKIE, 'X-Api-Key': API_KEY } },
  });
  await client.connect(transport);
  try {
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('echo');
    const hi = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
    expect(hi.content).toEqual([{ type: 'text', text: 'hello' }]);
    // A careless user pastes credentials into a tool call: the server echoes them back.
    await client.callTool({
      name: 'echo',
      arguments: { text: `my token is ${TOKEN} and the key ${API_KEY}; c00kie-value-77aa`, password: PASSWORD },
    });
  } finally {
    await client.close();
  }
}

async function record(
  target: string,
  revision: '2026-07-28' | '2025-11-25',
  name: string,
): Promise<{ file: string; session: Session }> {
  const file = join(dir, name);
  const recorder = await startRecorder({ target: new URL(target), out: file, floor: LOOPBACK });
  await converse(recorder.url, revision);
  const session = await recorder.close();
  expect(session).toBeDefined();
  return { file, session: session! };
}

function expectNoCredential(text: string): void {
  for (const secret of [TOKEN, COOKIE, 'c00kie-value-77aa', API_KEY, QUERY_KEY, PASSWORD])
    expect(text).not.toContain(secret);
}

/** An SDK 2.4 server like fleet-sim's modern target, varied: a field gained, or the tool gone. */
async function sdkServer(variant: 'gained' | 'lost'): Promise<{ url: string; close(): Promise<void> }> {
  const create = () => {
    const server = new McpServer({ name: 'modern', version: '2.4.0' });
    if (variant === 'gained')
      server.registerTool(
        'echo',
        {
          title: 'Echo',
          description: 'Echoes the given text.',
          inputSchema: z.object({ text: z.string() }),
          annotations: { readOnlyHint: true },
        },
        async ({ text }) => ({ content: [{ type: 'text', text }], structuredContent: { length: text.length } }),
      );
    else
      server.registerTool(
        'shout',
        { description: 'Upper case.', inputSchema: z.object({ text: z.string() }) },
        async ({ text }) => ({
          content: [{ type: 'text', text: text.toUpperCase() }],
        }),
      );
    return server;
  };
  const handler = createMcpHandler(create, { legacy: 'stateless' });
  const node = toNodeHandler(handler);
  const http: Server = createServer((req, res) => void node(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    async close() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      await handler.close();
    },
  };
}

describe('record', () => {
  it('records a stateless 2026-07-28 conversation of the SDK client, with no credential in the file', async () => {
    const target = `${sim.target('modern').url}?api_key=${QUERY_KEY}`;
    const { file, session } = await record(target, '2026-07-28', 'modern.jsonl');
    const text = readFileSync(file, 'utf8');
    expectNoCredential(text);
    expect(text).toContain('[redacted]');
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({
      session: 'mcp-fleet/1',
      revision: '2026-07-28',
      url: expect.stringContaining('api_key=••••••'),
    });
    expect(lines.slice(1).map((l) => l.method)).toEqual(['server/discover', 'tools/list', 'tools/call', 'tools/call']);
    const call = lines[3];
    expect(call).toMatchObject({
      params: { name: 'echo', arguments: { text: 'hello' } },
      result: { content: [{ type: 'text', text: 'hello' }] },
      revision: '2026-07-28',
    });
    // The transport's _meta is not kept; the secret-named argument is replaced whole.
    expect(call.params._meta).toBeUndefined();
    expect(lines[4].params.arguments.password).toBe('[redacted]');
    expect(lines[4].result.content[0].text).toBe('my token is [redacted] and the key [redacted]; [redacted]');
    expect(parseSession(text)).toEqual({ ok: true, session });
  });

  it('records a 2025-11-25 session whose answers come as event streams', async () => {
    const { file, session } = await record(sim.target('sessions-2025-11-25').url, '2025-11-25', 'sessions.jsonl');
    expectNoCredential(readFileSync(file, 'utf8'));
    expect(session.header.revision).toBe('2025-11-25');
    expect(session.exchanges.map((x) => x.method)).toEqual(['initialize', 'tools/list', 'tools/call', 'tools/call']);
    expect(session.exchanges[2]!.result).toEqual({ content: [{ type: 'text', text: 'hello' }] });
  });

  it('refuses a target the probe floor refuses, and listens on loopback only', async () => {
    await expect(
      startRecorder({
        target: new URL(sim.target('modern').url),
        out: join(dir, 'x.jsonl'),
        floor: { allow: [], deny: [] },
      }),
    ).rejects.toThrow(RefusedTarget);
    expect(await main(['record', sim.target('modern').url, '--out', join(dir, 'y.jsonl')], quiet)).toBe(10);
    expect(() => listenAddress('0.0.0.0:7600')).toThrow(/loopback only/);
    expect(listenAddress('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(await main(['record', sim.target('modern').url], quiet)).toBe(2);
  });
});

describe('replay', () => {
  let modern: { file: string; session: Session };
  beforeAll(async () => {
    modern = await record(sim.target('modern').url, '2026-07-28', 'replay-modern.jsonl');
  });

  it('against the same server: every step the same, exit 0', async () => {
    const run = await replaySession(sim.target('modern').url, { session: modern.session });
    expect(run.steps.map((s) => [s.method, s.verdict])).toEqual([
      ['tools/list', 'same'],
      ['tools/call', 'same'],
      ['tools/call', 'same'],
    ]);
    expect(run).toMatchObject({
      pass: true,
      outcome: 'success',
      message: '3 same, 0 newer equivalent, 0 protocol error, 0 broken',
    });
    let printed = '';
    expect(
      await main(['replay', modern.file, sim.target('modern').url, '--json'], (s) => {
        printed += s;
        return true;
      }),
    ).toBe(0);
    expect(JSON.parse(printed).steps).toHaveLength(3);
  });

  it('against a server whose answers gained fields: newer_equivalent, naming what was added', async () => {
    const server = await sdkServer('gained');
    try {
      const run = await replaySession(server.url, { session: modern.session });
      expect(run.steps.map((s) => s.verdict)).toEqual(['newer_equivalent', 'newer_equivalent', 'newer_equivalent']);
      expect(run.steps[0]!.reason).toContain('$.tools[0].title');
      expect(run.steps[1]!.reason).toContain('$.structuredContent');
      expect(run.pass).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('against a server that lost the tool: tools/list broken, the call refused cleanly or broken; exit 1', async () => {
    const server = await sdkServer('lost');
    try {
      const run = await replaySession(server.url, { session: modern.session, allowWrites: true });
      expect(run.steps[0]).toMatchObject({ verdict: 'broken' });
      expect(run.steps[0]!.reason).toMatch(/^\$\.tools\[0\]\.name: was "echo", now "shout"$/);
      for (const s of run.steps.slice(1)) expect(['broken', 'protocol_error']).toContain(s.verdict);
      expect(run.pass).toBe(false);
      let printed = '';
      expect(
        await main(['replay', modern.file, server.url, '--allow-writes'], (s) => {
          printed += s;
          return true;
        }),
      ).toBe(1);
      expect(printed).toMatch(/tools\/list\s+-\s+broken/);
      // Without --allow-writes a tool the server does not mark read-only is not sent.
      const careful = await replaySession(server.url, { session: modern.session });
      expect(careful.steps.slice(1).map((s) => s.verdict)).toEqual(['refused', 'refused']);
    } finally {
      await server.close();
    }
  });

  it('a legacy recording replays in the modern era (--protocol), and says what differs between the SDKs', async () => {
    const legacy = await record(sim.target('sessions-2025-11-25').url, '2025-11-25', 'replay-legacy.jsonl');
    const run = await replaySession(sim.target('modern').url, { session: legacy.session, protocol: '2026-07-28' });
    expect(run.protocol).toEqual({
      recorded: '2025-11-25',
      requested: '2026-07-28',
      negotiated: '2026-07-28',
      era: 'modern',
    });
    // SDK 1.32 (recorded) and SDK 2.4 (replayed) really differ: the tool's JSON Schema dialect
    // changed (a changed value: broken), and 2.4 adds resultType to a tool's answer (newer equivalent).
    expect(run.steps.map((s) => s.verdict)).toEqual(['broken', 'newer_equivalent', 'newer_equivalent']);
    expect(run.steps[0]!.reason).toBe(
      '$.tools[0].inputSchema.$schema: was "http://json-schema.org/draft-07/schema#", now "https://json-schema.org/draft/2020-12/schema"',
    );
    expect(run.steps[1]!.reason).toBe('everything recorded is still there; added $.resultType');
    expect(run.pass).toBe(false);
  });

  it('--print-script prints steps a fleet file accepts', async () => {
    let printed = '';
    expect(
      await main(['replay', modern.file, '--print-script'], (s) => {
        printed += s;
        return true;
      }),
    ).toBe(0);
    const steps = YAML.parse(printed);
    expect(ScriptSchema.safeParse(steps).success).toBe(true);
    expect(steps.steps[1]).toMatchObject({
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'hello' } },
      expect: [{ isError: false }, { path: '$.content[0].text', equals: 'hello' }, { latencyMs: expect.any(Number) }],
    });
    expect(scriptYaml(modern.session)).toBe(printed);
  });

  it('a hostile session file is a usage error naming the line', async () => {
    const bad = join(dir, 'bad.jsonl');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      bad,
      '{"session":"mcp-fleet/1","url":"x","revision":"2026-07-28","recordedAt":"now"}\n{"method":"tools/call"}\n',
    );
    expect(await main(['replay', bad, sim.target('modern').url], quiet)).toBe(2);
    expect(parseSession(readFileSync(bad, 'utf8'))).toEqual({
      ok: false,
      error: 'line 2: needs a result object or an error {code, message}',
    });
    expect(parseSession('not json')).toEqual({ ok: false, error: 'line 1: not JSON' });
  });
});

describe('a script run on the bus', () => {
  it('fits ScriptRunSchema, passing or failing with hostile words', async () => {
    const steps = [
      {
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'x'.repeat(3000) } },
        expect: [{ path: '$.content[0].text', equals: 'y' }],
      },
      { method: 'tools/list' },
    ];
    const run = await runScript(sim.target('modern').url, { protocol: '2026-07-28', script: { steps } });
    expect(run.steps.map((s) => s.status)).toEqual(['fail', 'pass']);
    expect(ScriptRunSchema.safeParse(run).success).toBe(true);
    const down = await runScript('http://127.0.0.1:9/mcp', { protocol: '2025-11-25', script: { steps } });
    expect(down.outcome).toBe('unreachable');
    expect(ScriptRunSchema.safeParse(down).success).toBe(true);
  });
});

// The agent part's child processes (run with tsx): `fleet <n> <delayMs>` serves n slow targets, one
// loopback port each (n origins, as a real fleet has), each answering a 2026-07-28 `server/discover`
// after `delayMs`; `agent <concurrency>` runs one agent on an in-process queue in a process of its
// own, so its RSS is the agent's alone, and keeps every target busy on `load`: each result is
// answered with the next job for the same target. The parent reads RSS from /proc; the child also
// reports process.memoryUsage() (heap, external, array buffers), its CPU time and jobs in flight on `sample`.
// The agent loads what `mcp-fleet agent` loads (its command's module graph, below), so its idle
// RSS is the shipped agent's; only the bus differs (in-process here, NATS there).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startAgent } from '@mcp-fleet/agent';
import { createMemoryBus, type Job } from '@mcp-fleet/bus';
import { configureLogs, createLogger } from '@mcp-fleet/log';

export type AgentChildIn = { type: 'load'; urls: string[]; timeoutMs: number } | { type: 'sample' } | { type: 'stop' };
export type AgentChildOut =
  | { type: 'ready'; urls?: string[] }
  | { type: 'sample'; memory: NodeJS.MemoryUsage; cpu: NodeJS.CpuUsage; inFlight: number; done: number }
  | { type: 'stopped' };

const send = (m: AgentChildOut) => process.send?.(m);
const REGION = 'bench';

const DISCOVER_RESULT = JSON.stringify({
  supportedVersions: ['2026-07-28'],
  capabilities: {},
  _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'slow', version: '1' } },
});

async function fleet(count: number, delayMs: number): Promise<() => Promise<void>> {
  const servers: Server[] = [];
  const urls: string[] = [];
  for (let i = 0; i < count; i++) {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString();
      });
      req.on('end', () => {
        let id: unknown = null;
        try {
          id = (JSON.parse(body) as { id?: unknown }).id ?? null;
        } catch {}
        const timer = setTimeout(() => {
          const text = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${DISCOVER_RESULT}}`;
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
          res.end(text);
        }, delayMs);
        res.on('close', () => clearTimeout(timer));
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    servers.push(server);
    urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  }
  send({ type: 'ready', urls });
  return async () => {
    for (const s of servers) s.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  };
}

async function agent(concurrency: number): Promise<() => Promise<void>> {
  // What the shipped agent has loaded before its first job: the `agent` verb's module and all it imports.
  await import('../../commands/agent');
  // Warnings only: the agent's own lines would bury the bench's table.
  configureLogs({ level: 'warn', format: 'json', colour: false });
  const log = createLogger('bench-agent');
  const bus = createMemoryBus({ log });
  const a = await startAgent({
    bus,
    region: REGION,
    concurrency,
    metricsPort: null,
    stopGraceMs: 1_000,
    log,
    probeFloor: { allow: ['127.0.0.0/8'], deny: [] },
  });
  let done = 0;
  let seq = 0;
  const jobFor = (url: string, serverId: string, timeoutMs: number): Job => {
    const now = Date.now();
    seq += 1;
    return {
      jobId: `bench-${seq}`,
      kind: 'handshake',
      region: REGION,
      serverId,
      serverName: serverId,
      testId: serverId,
      url,
      headers: {},
      depth: 'handshake',
      script: null,
      revision: 'newest',
      currentRevision: '2026-07-28',
      timeoutMs,
      slot: now,
      scheduledAt: new Date(now).toISOString(),
      allow: ['127.0.0.0/8'],
      deny: [],
    };
  };
  let load: { urls: string[]; timeoutMs: number } | undefined;
  const results = bus.consumeResults(
    async (d) => {
      done += 1;
      await d.ack();
      const i = Number(d.value.serverId.slice(1));
      if (load) await bus.publishJob(jobFor(load.urls[i]!, d.value.serverId, load.timeoutMs));
    },
    { concurrency: 64 },
  );
  process.on('message', (m: AgentChildIn) => {
    if (m.type === 'load') {
      load = m;
      for (const [i, url] of m.urls.entries()) void bus.publishJob(jobFor(url, `s${i}`, m.timeoutMs));
    }
    if (m.type === 'sample')
      send({ type: 'sample', memory: process.memoryUsage(), cpu: process.cpuUsage(), inFlight: a.inFlight(), done });
  });
  send({ type: 'ready' });
  return async () => {
    load = undefined;
    await a.stop();
    await results.stop();
    await bus.close();
  };
}

const [role, ...args] = process.argv.slice(2);
const stopRole = role === 'fleet' ? await fleet(Number(args[0]), Number(args[1])) : await agent(Number(args[0]));
let stopping: Promise<void> | undefined;
const stop = () => {
  stopping ??= stopRole();
  return stopping;
};
process.on('message', (m: AgentChildIn) => {
  if (m.type === 'stop') void stop().finally(() => send({ type: 'stopped' }));
});
// The parent went away: end too.
process.on('disconnect', () => void stop().finally(() => process.exit(0)));

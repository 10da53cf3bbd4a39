// An agent keeps consuming across a NATS restart: a private nats-server (its own port and store
// directory) is stopped and started again under a live bus.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectNatsBus, type NatsBus } from '../src';
import { capturedLogger, job, sleep, waitFor } from './fixtures';

const NATS_SERVER = process.env.NATS_SERVER_BIN ?? 'nats-server';
const store = mkdtempSync(join(tmpdir(), 'mcp-fleet-nats-'));
let port = 0;
let server: ChildProcess | undefined;

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function listening(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
}

async function startServer() {
  server = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], { stdio: 'ignore' });
  await waitFor(listening, 10_000, 'nats-server to listen');
}

async function stopServer() {
  const child = server;
  server = undefined;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

beforeAll(async () => {
  port = await freePort();
  await startServer();
});
afterAll(async () => {
  await stopServer();
  rmSync(store, { recursive: true, force: true });
});

it('resumes consuming after NATS restarts, with the durable and its jobs intact', async () => {
  const { log, lines } = capturedLogger();
  const bus: NatsBus = await connectNatsBus({ servers: `127.0.0.1:${port}`, log });
  const region = 'eu-west';
  await bus.ensure([region]);
  const seen: string[] = [];
  const sub = bus.consumeJobs(
    region,
    async (d) => {
      seen.push(d.value.jobId);
      await d.ack();
    },
    { concurrency: 2 },
  );
  const before = job(region);
  await bus.publishJob(before);
  await waitFor(() => seen.includes(before.jobId));

  await stopServer();
  await sleep(1_500);
  await startServer();

  const after = job(region);
  // Publishing may fail until the client has reconnected; the scheduler retries the same way.
  await waitFor(
    async () =>
      bus.publishJob(after).then(
        () => true,
        () => false,
      ),
    20_000,
    'a publish after restart',
  );
  await waitFor(() => seen.includes(after.jobId), 20_000, 'the job published after the restart');
  expect(seen.filter((id) => id === after.jobId)).toHaveLength(1);
  expect(lines().some((l) => l.msg === 'NATS disconnected; reconnecting')).toBe(true);
  expect(lines().some((l) => l.msg === 'NATS reconnected')).toBe(true);
  await sub.stop();
  await bus.close();
});

// An agent keeps consuming across a NATS restart: a private nats-server (its own port and store
// directory) is stopped and started again under a live bus.
import { type NatsServer, startNatsServer } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectNatsBus, type NatsBus } from '../src';
import { capturedLogger, job, sleep, waitFor } from './fixtures';

let server: NatsServer;

beforeAll(async () => {
  server = await startNatsServer();
});
afterAll(async () => {
  await server?.close();
});

it('resumes consuming after NATS restarts, with the durable and its jobs intact', async () => {
  const { log, lines } = capturedLogger();
  const bus: NatsBus = await connectNatsBus({ servers: server.url, log });
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

  await server.stop();
  await sleep(1_500);
  await server.start();

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

// Run by memory.test.ts in a child process: leaves a delivery unsettled and a nak pending a
// minute, closes the bus, and must then exit on its own.

import { createLogger } from '@mcp-fleet/log';
import { createMemoryBus } from '../src';
import { job } from './fixtures';

const bus = createMemoryBus({ log: createLogger('bus', 'silent'), ackWaitMs: 60_000 });
let handed = 0;
bus.consumeJobs(
  'eu-west',
  async (d) => {
    handed++;
    if (d.value.timeoutMs === 1_000) await d.nak(60_000);
  },
  { concurrency: 2 },
);
await bus.publishJob(job('eu-west'));
await bus.publishJob(job('eu-west', { timeoutMs: 1_000 }));
while (handed < 2) await new Promise((resolve) => setTimeout(resolve, 10));
await bus.close();
console.log('closed');

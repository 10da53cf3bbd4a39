// The in-process queue against the contract, plus what only it has: timers that never hold the process.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createLogger } from '@mcp-fleet/log';
import { describe, expect, it } from 'vitest';
import { type Bus, createMemoryBus, type MemoryBus, SUBJECTS } from '../src';
import { busContract } from './contract';
import { freshRegion, job } from './fixtures';

const run = promisify(execFile);

busContract('memory', {
  open: async (opts) => createMemoryBus(opts),
  peer: async (bus) => bus,
  raw: async (bus: Bus, subject, data) => (bus as MemoryBus).publishRaw(subject, data),
  subjects: SUBJECTS,
});

describe('memory bus', () => {
  it('keeps no timer alive after close(): the process exits on its own', async () => {
    const script = fileURLToPath(new URL('./exit-after-close.script.ts', import.meta.url));
    const started = Date.now();
    const { stdout } = await run(process.execPath, ['--import', 'tsx', script], { timeout: 20_000 });
    expect(stdout.trim()).toBe('closed');
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('refuses to publish once closed', async () => {
    const bus = createMemoryBus({ log: createLogger('bus', 'silent') });
    await bus.close();
    await expect(bus.publishJob(job(freshRegion()))).rejects.toThrow('bus closed');
  });
});

// Choosing the queue from the environment, and the logger's redaction of credentials.
import { agentEnv, parseEnv } from '@mcp-fleet/config';
import { createLogger } from '@mcp-fleet/log';
import { describe, expect, it } from 'vitest';
import { openBus } from '../src';

/** The bus options an environment gives, as an agent parses it (config's agent schema). */
const busOptionsFromEnv = (env: Record<string, string>) => parseEnv(agentEnv, env).nats;

describe('busOptionsFromEnv', () => {
  it('reads the NATS variables, ignoring empty ones', () => {
    expect(
      busOptionsFromEnv({
        NATS_URL: 'nats://nats-1:4222,nats://nats-2:4222',
        NATS_USER: 'agent',
        NATS_PASSWORD: 'pw',
        NATS_TOKEN: '',
        NATS_CREDS: '/etc/nats/agent.creds',
        NATS_CA: '/etc/nats/ca.pem',
      }),
    ).toEqual({
      natsUrl: 'nats://nats-1:4222,nats://nats-2:4222',
      user: 'agent',
      pass: 'pw',
      credsFile: '/etc/nats/agent.creds',
      tls: { caFile: '/etc/nats/ca.pem' },
    });
    expect(busOptionsFromEnv({ NATS_URL: '  ' })).toEqual({});
  });

  it('opens the in-process queue without NATS_URL and NATS with it', async () => {
    const log = createLogger('bus', 'silent');
    const memory = await openBus({ ...busOptionsFromEnv({}), log });
    expect(memory.kind).toBe('memory');
    await memory.close();
    const nats = await openBus({ natsUrl: process.env.NATS_TEST_URL ?? '127.0.0.1:4222', log });
    expect(nats.kind).toBe('nats');
    await nats.close();
  });
});

describe('createLogger', () => {
  it('redacts headers and authorization wherever they sit', () => {
    const lines: string[] = [];
    const log = createLogger('test', 'info', { write: (line: string) => lines.push(line) });
    log.info({ headers: { Authorization: 'Bearer a' }, job: { headers: { Authorization: 'Bearer b' } } }, 'one');
    log.info({ authorization: 'Bearer c', request: { authorization: 'Bearer d' } }, 'two');
    const text = lines.join('');
    for (const secret of ['Bearer a', 'Bearer b', 'Bearer c', 'Bearer d']) expect(text).not.toContain(secret);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      name: 'test',
      headers: '[redacted]',
      job: { headers: '[redacted]' },
    });
  });
});

// NATS over TLS with credentials, as the environment configures it (NATS_URL, NATS_CA, NATS_USER /
// NATS_PASSWORD, NATS_TOKEN, NATS_CERT / NATS_KEY): private nats-servers on loopback with a
// certificate from a private CA, one with a user and password, one that also demands a client
// certificate. Jobs travel over JetStream on both; a wrong CA, a wrong password, a missing client
// certificate or plaintext are refused, and no error repeats a password.

import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentEnv, parseEnv } from '@mcp-fleet/config';
import { createLogger } from '@mcp-fleet/log';
import { makeTestCa, NATS_SERVER_BIN, type NatsServer, startNatsServer, type TestCa } from '@mcp-fleet/testkit';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsConnectionOptions, openBus } from '../src';
import { roundTrip } from './fixtures';

/** The bus options an environment gives, as an agent parses it (config's agent schema). */
const busOptionsFromEnv = (env: Record<string, string>) => parseEnv(agentEnv, env).nats;

const runnable = existsSync(NATS_SERVER_BIN);
const log = createLogger('test', 'silent');

/** A nats-server with JetStream and the given TLS and authorization blocks, on a free loopback port. */
function startNats(tls: string, authorization: string): Promise<NatsServer> {
  // A host name the certificate names: the NATS client checks the name it dialled (for an IP
  // address it checks `localhost`), so NATS_URL should use the name on the server's certificate.
  return startNatsServer({ config: `tls { ${tls} }\nauthorization { ${authorization} }`, urlBase: 'tls://localhost' });
}

describe.skipIf(!runnable)('NATS over TLS', () => {
  let dir: string;
  let ca: TestCa;
  let password: NatsServer;
  let mutual: NatsServer;
  const PASSWORD = `pw-${randomBytes(9).toString('hex')}`;
  const TOKEN = `tok-${randomBytes(9).toString('hex')}`;
  const namespace = () => `tls${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcpfleet-nats-tls-'));
    ca = makeTestCa(dir, 'DNS:localhost,IP:127.0.0.1');
    const serverTls = `cert_file: "${ca.server.cert}", key_file: "${ca.server.key}", timeout: 2`;
    password = await startNats(serverTls, `user: fleet, password: "${PASSWORD}"`);
    mutual = await startNats(`${serverTls}, ca_file: "${ca.ca}", verify: true`, `token: "${TOKEN}"`);
  }, 30_000);

  afterAll(async () => {
    await password?.close();
    await mutual?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('carries jobs with NATS_CA and NATS_USER / NATS_PASSWORD from the environment', async () => {
    const opts = busOptionsFromEnv({
      NATS_URL: password.url,
      NATS_CA: ca.ca,
      NATS_USER: 'fleet',
      NATS_PASSWORD: PASSWORD,
      MCP_FLEET_NATS_NAMESPACE: namespace(),
    });
    const bus = await openBus({ ...opts, log });
    try {
      expect(bus.kind).toBe('nats');
      await roundTrip(bus);
    } finally {
      await bus.close();
    }
  });

  it('refuses a server its CA did not sign, a wrong password and plaintext, never repeating the password', async () => {
    const attempt = async (env: Record<string, string>) => {
      const err = await openBus({ ...busOptionsFromEnv(env), log }).then(
        async (bus) => {
          await bus.close();
          return undefined;
        },
        (e: Error) => e,
      );
      expect(err, JSON.stringify(Object.keys(env))).toBeInstanceOf(Error);
      expect(String(err?.message)).not.toContain(PASSWORD);
      return String(err?.message);
    };
    const base = { NATS_URL: password.url, NATS_USER: 'fleet', NATS_PASSWORD: PASSWORD };
    // Another CA, or none (the system's trust store does not know ours).
    expect(await attempt({ ...base, NATS_CA: ca.otherCa })).toMatch(/certificate|self.signed|verify/i);
    expect(await attempt(base)).toMatch(/certificate|self.signed|verify/i);
    // The right CA, a wrong password.
    expect(await attempt({ ...base, NATS_CA: ca.ca, NATS_PASSWORD: `${PASSWORD}-wrong` })).toMatch(
      /authorization|auth/i,
    );
    // A nats:// URL gets TLS anyway when the server requires it (no fallback to plaintext): here, with our CA, it works.
    const plainUrl = await openBus({
      ...busOptionsFromEnv({ ...base, NATS_URL: password.url.replace('tls://', 'nats://'), NATS_CA: ca.ca }),
      log,
    });
    await plainUrl.close();
  });

  it('presents a client certificate (NATS_CERT / NATS_KEY) where the server demands one, with NATS_TOKEN', async () => {
    const client = ca.client('agent-eu-west');
    const bus = await openBus({
      ...busOptionsFromEnv({
        NATS_URL: mutual.url,
        NATS_CA: ca.ca,
        NATS_CERT: client.cert,
        NATS_KEY: client.key,
        NATS_TOKEN: TOKEN,
        MCP_FLEET_NATS_NAMESPACE: namespace(),
      }),
      log,
    });
    try {
      await roundTrip(bus);
    } finally {
      await bus.close();
    }
    // Without the client certificate the server ends the handshake (the bus's own connection
    // options, with a short connect timeout so the refusal shows quickly).
    const { natsUrl, ...rest } = busOptionsFromEnv({ NATS_URL: mutual.url, NATS_CA: ca.ca, NATS_TOKEN: TOKEN });
    const refused = await connect({ ...natsConnectionOptions({ ...rest, servers: natsUrl! }), timeout: 3_000 }).then(
      async (nc) => {
        await nc.close();
        return undefined;
      },
      (e: Error) => e,
    );
    expect(refused).toBeInstanceOf(Error);
  });
});

// NATS over TLS with credentials, as the environment configures it (NATS_URL, NATS_CA, NATS_USER /
// NATS_PASSWORD, NATS_TOKEN, NATS_CERT / NATS_KEY): private nats-servers on loopback with a
// certificate from a private CA, one with a user and password, one that also demands a client
// certificate. Jobs travel over JetStream on both; a wrong CA, a wrong password, a missing client
// certificate or plaintext are refused, and no error repeats a password.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { haveOpenssl, makeTestCa, type TestCa, waitFor } from '@mcp-fleet/testkit';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Bus, busOptionsFromEnv, createLogger, type Job, natsConnectionOptions, openBus } from '../src';
import { job } from './fixtures';

const NATS_SERVER = process.env.MCP_FLEET_TEST_NATS_SERVER ?? '/usr/sbin/nats-server';
const runnable = existsSync(NATS_SERVER) && haveOpenssl();
const log = createLogger('test', 'silent');

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

interface NatsServer {
  url: string;
  stop(): Promise<void>;
}

/** A nats-server with JetStream and the given TLS and authorization blocks, on a free loopback port. */
async function startNats(dir: string, name: string, tls: string, authorization: string): Promise<NatsServer> {
  const port = await freePort();
  const store = join(dir, `${name}-js`);
  mkdirSync(store);
  const conf = join(dir, `${name}.conf`);
  writeFileSync(
    conf,
    `listen: "127.0.0.1:${port}"\njetstream { store_dir: "${store}" }\ntls { ${tls} }\nauthorization { ${authorization} }\n`,
  );
  const child: ChildProcess = spawn(NATS_SERVER, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  await waitFor(
    `nats-server ${name} to listen (${stderr.slice(-300)})`,
    () => stderr.includes('Server is ready'),
    10_000,
  );
  return {
    // A host name the certificate names: the NATS client checks the name it dialled (for an IP
    // address it checks `localhost`), so NATS_URL should use the name on the server's certificate.
    url: `tls://localhost:${port}`,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** A job published and consumed over the bus: JetStream works through the connection. */
async function roundTrip(bus: Bus): Promise<void> {
  const region = 'eu-west';
  await bus.ensure([region]);
  const got: Job[] = [];
  const sub = bus.consumeJobs(
    region,
    async (d) => {
      got.push(d.value);
      await d.ack();
    },
    { concurrency: 1 },
  );
  const sent = job(region);
  await bus.publishJob(sent);
  await waitFor('the job over TLS', () => got.find((j) => j.jobId === sent.jobId), 10_000);
  await sub.stop();
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
    password = await startNats(dir, 'password', serverTls, `user: fleet, password: "${PASSWORD}"`);
    mutual = await startNats(dir, 'mutual', `${serverTls}, ca_file: "${ca.ca}", verify: true`, `token: "${TOKEN}"`);
  }, 30_000);

  afterAll(async () => {
    await password?.stop();
    await mutual?.stop();
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

// NATS with decentralized JWT auth, as NATS_CREDS configures it (a `.creds` file: a user JWT and
// its nkey seed, what `nsc` or a hosted NATS hands out): a private nats-server in operator mode
// with an account that may use JetStream. Jobs travel with the user's creds; a user of an account
// the server does not know, and a creds file that is not there, are refused with an error that
// names the problem and never holds the seed.

import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentEnv, parseEnv } from '@mcp-fleet/config';
import { createLogger } from '@mcp-fleet/log';
import { NATS_SERVER_BIN, type NatsServer, startNatsServer } from '@mcp-fleet/testkit';
import { encodeAccount, encodeOperator, encodeUser, fmtCreds } from '@nats-io/jwt';
import { createAccount, createOperator, createUser } from '@nats-io/nkeys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Bus, openBus } from '../src';
import { roundTrip } from './fixtures';

/** The bus options an environment gives, as an agent parses it (config's agent schema). */
const busOptionsFromEnv = (env: Record<string, string>) => parseEnv(agentEnv, env).nats;

const log = createLogger('test', 'silent');
const decoder = new TextDecoder();

/** A `.creds` file for a new user of the account `accountKey` signs, and the user's seed. */
async function credsFile(dir: string, name: string, accountKey: ReturnType<typeof createAccount>) {
  const user = createUser();
  const jwt = await encodeUser(name, user, accountKey);
  const file = join(dir, `${name}.creds`);
  writeFileSync(file, fmtCreds(jwt, user), { mode: 0o600 });
  return { file, seed: decoder.decode(user.getSeed()) };
}

describe.skipIf(!existsSync(NATS_SERVER_BIN))('NATS with a creds file (NATS_CREDS)', () => {
  let dir: string;
  let server: NatsServer;
  let fleet: { file: string; seed: string };
  let stranger: { file: string; seed: string };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcp-fleet-nats-creds-'));
    const operator = createOperator();
    const account = createAccount();
    const system = createAccount();
    // No limits (-1); a limit left out reads as 0, and JetStream is off for an account unless its
    // limits turn it on.
    const unlimited = {
      subs: -1,
      data: -1,
      payload: -1,
      imports: -1,
      exports: -1,
      conn: -1,
      leaf: -1,
      wildcards: true,
    };
    const jetstream = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 };
    const accountJwt = await encodeAccount(
      'fleet',
      account,
      { limits: { ...unlimited, ...jetstream } },
      { signer: operator },
    );
    const systemJwt = await encodeAccount('SYS', system, {}, { signer: operator });
    const operatorJwt = await encodeOperator('mcp-fleet-test', operator, {
      system_account: system.getPublicKey(),
    });
    server = await startNatsServer({
      config: [
        `operator: ${operatorJwt}`,
        `system_account: ${system.getPublicKey()}`,
        'resolver: MEMORY',
        `resolver_preload: { ${account.getPublicKey()}: ${accountJwt}, ${system.getPublicKey()}: ${systemJwt} }`,
      ].join('\n'),
    });
    fleet = await credsFile(dir, 'agent-eu-west', account);
    // Signed by an account the server was never told about.
    stranger = await credsFile(dir, 'stranger', createAccount());
  });

  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('carries jobs over JetStream with the user the creds file holds', async () => {
    const bus: Bus = await openBus({
      ...busOptionsFromEnv({ NATS_URL: server.url, NATS_CREDS: fleet.file, MCP_FLEET_NATS_NAMESPACE: 'creds' }),
      log,
    });
    try {
      await roundTrip(bus);
    } finally {
      await bus.close();
    }
  });

  it('refuses a user of an unknown account and a missing creds file, never repeating a seed', async () => {
    const attempt = async (env: Record<string, string>) => {
      const err = await openBus({ ...busOptionsFromEnv({ NATS_URL: server.url, ...env }), log }).then(
        async (bus) => {
          await bus.close();
          return undefined;
        },
        (e: Error) => e,
      );
      expect(err, JSON.stringify(env)).toBeInstanceOf(Error);
      for (const seed of [fleet.seed, stranger.seed]) expect(String(err?.message)).not.toContain(seed);
      return String(err?.message);
    };
    expect(await attempt({ NATS_CREDS: stranger.file })).toMatch(/authorization/i);
    expect(await attempt({})).toMatch(/authorization/i);
    const missing = join(dir, 'nowhere.creds');
    expect(await attempt({ NATS_CREDS: missing })).toContain(missing);
  });
});

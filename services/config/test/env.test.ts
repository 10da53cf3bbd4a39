// Each role's environment: parsed once into typed settings, defaults as documented, and errors
// that name the variable (never a secret's value), in the words the CLI has always said them.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  agentEnv,
  applyEnv,
  ConfigError,
  controlEnv,
  floorPart,
  parseEnv,
  probeFloorOf,
  ROLES,
  tracesUrl,
  upEnv,
  variablesOf,
  webEnv,
} from '../src';

const ADMIN = 'a'.repeat(32);
const READ = 'r'.repeat(32);

describe("control's environment", () => {
  it('takes the defaults when nothing is set', () => {
    const c = parseEnv(controlEnv, {});
    expect(c.api).toEqual({ host: '127.0.0.1', port: 7070 });
    expect(c.retentionDays).toBe(30);
    expect(c.regions).toBeUndefined();
    expect(c.auth).toEqual({ tokens: [], metricsToken: undefined });
    expect(c.exposure).toEqual({ allowUnauthenticated: false, allowedHosts: [] });
    expect(c.probeFloor).toEqual({});
    expect(c.database).toEqual({ url: undefined, password: undefined, tls: {} });
    // One copy of each stream unless told: a single nats-server cannot keep more.
    expect(c.nats).toEqual({ replicas: 1 });
    expect(c.log).toEqual({ level: 'info', format: undefined, colour: true });
  });

  it('makes typed values: ports as numbers, lists split, tokens with their scope and source', () => {
    const c = parseEnv(controlEnv, {
      MCP_FLEET_API_PORT: '8080',
      MCP_FLEET_API_HOST: '0.0.0.0',
      MCP_FLEET_REGIONS: ' eu-west, ,us-east ',
      MCP_FLEET_API_TOKENS: `read:${READ}`,
      MCP_FLEET_ADMIN_TOKEN: ADMIN,
      MCP_FLEET_METRICS_TOKEN: 'm'.repeat(32),
      MCP_FLEET_ALLOWED_HOSTS: 'control, dashboard.internal',
      MCP_FLEET_ALLOW_UNAUTHENTICATED: 'true',
      MCP_FLEET_PROBE_ALLOW: '10.0.0.0/8',
      MCP_FLEET_PROBE_SCHEMES: 'HTTPS:',
      MCP_FLEET_RUN_RETENTION_DAYS: '7',
      NATS_URL: 'tls://nats:4222',
      NATS_USER: 'control',
      NATS_CA: '/ca.pem',
      MCP_FLEET_NATS_NAMESPACE: ' test ',
      LOG_FORMAT: 'JSON',
      NO_COLOR: '1',
    });
    expect(c.api).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(c.regions).toEqual(['eu-west', 'us-east']);
    expect(c.auth.tokens).toEqual([
      { scope: 'read', token: READ, from: 'MCP_FLEET_API_TOKENS entry 1' },
      { scope: 'admin', token: ADMIN, from: 'MCP_FLEET_ADMIN_TOKEN' },
    ]);
    expect(c.auth.metricsToken).toBe('m'.repeat(32));
    expect(c.exposure).toEqual({ allowUnauthenticated: true, allowedHosts: ['control', 'dashboard.internal'] });
    expect(c.probeFloor).toEqual({ allow: ['10.0.0.0/8'], schemes: ['https'] });
    expect(probeFloorOf(c.probeFloor)).toEqual({ allow: ['10.0.0.0/8'], deny: [], schemes: ['https'] });
    expect(c.retentionDays).toBe(7);
    expect(c.nats).toEqual({
      natsUrl: 'tls://nats:4222',
      user: 'control',
      namespace: 'test',
      tls: { caFile: '/ca.pem' },
      replicas: 1,
    });
    expect(c.log).toEqual({ level: 'info', format: 'json', colour: false });
  });

  it('says what is wrong naming the variable, in the words the CLI always used', () => {
    const wrong = (env: Record<string, string>) => () => parseEnv(controlEnv, env);
    expect(wrong({ MCP_FLEET_API_PORT: '70000' })).toThrow(
      new ConfigError('MCP_FLEET_API_PORT takes a whole number from 1 to 65535, got 70000'),
    );
    expect(wrong({ MCP_FLEET_RUN_RETENTION_DAYS: '0' })).toThrow(
      'MCP_FLEET_RUN_RETENTION_DAYS takes a whole number from 1 to 3650, got 0',
    );
    expect(wrong({ MCP_FLEET_ADMIN_TOKEN: 'short' })).toThrow(
      'MCP_FLEET_ADMIN_TOKEN is 5 characters; a token needs at least 32 (e.g. openssl rand -hex 32)',
    );
    expect(wrong({ MCP_FLEET_API_TOKENS: `write:${ADMIN}` })).toThrow(
      'MCP_FLEET_API_TOKENS entry 1 is not "read:<token>" or "admin:<token>"',
    );
    expect(wrong({ MCP_FLEET_ADMIN_TOKEN: ADMIN, MCP_FLEET_METRICS_TOKEN: ADMIN })).toThrow(
      'MCP_FLEET_METRICS_TOKEN is also an API token: give /metrics a token of its own',
    );
    expect(wrong({ MCP_FLEET_ALLOWED_HOSTS: 'http://control' })).toThrow(/^MCP_FLEET_ALLOWED_HOSTS entry 1 /);
    expect(wrong({ MCP_FLEET_PROBE_DENY: '300.1.1.1' })).toThrow(
      'MCP_FLEET_PROBE_DENY: "300.1.1.1" is not a CIDR like 10.20.0.0/16 or an address',
    );
    expect(wrong({ MCP_FLEET_PROBE_SCHEMES: 'file' })).toThrow(
      'MCP_FLEET_PROBE_SCHEMES: "file" is not a scheme probes speak (http, https)',
    );
    // A secret's value is never in the message.
    try {
      parseEnv(controlEnv, { MCP_FLEET_READ_TOKEN: 'hunter2 hunter2 hunter2 hunter2 hunter2' });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter2');
    }
  });

  it("sets the streams' replicas for a JetStream cluster: a whole number from 1 to 5, and only where streams are declared", () => {
    expect(parseEnv(controlEnv, { MCP_FLEET_NATS_REPLICAS: '3' }).nats.replicas).toBe(3);
    expect(parseEnv(upEnv, { MCP_FLEET_NATS_REPLICAS: '5' }).nats.replicas).toBe(5);
    expect(parseEnv(upEnv, {}).nats.replicas).toBe(1);
    for (const bad of ['0', '6', '2.5', 'three', '-1', ''])
      expect(() => parseEnv(controlEnv, { MCP_FLEET_NATS_REPLICAS: bad }), bad).toThrow(
        new ConfigError(`MCP_FLEET_NATS_REPLICAS takes a whole number from 1 to 5, got ${bad}`),
      );
    // Agents declare nothing (their NATS user may not): they neither read it nor pass it on.
    expect(variablesOf(agentEnv).map((v) => v.name)).not.toContain('MCP_FLEET_NATS_REPLICAS');
    expect(parseEnv(agentEnv, { MCP_FLEET_NATS_REPLICAS: '3' }).nats).not.toHaveProperty('replicas');
  });

  it('reads a secret from <VAR>_FILE when the variable is unset, naming the file when it cannot', () => {
    const dir = mkdtempSync(join(tmpdir(), 'config-env-'));
    writeFileSync(join(dir, 'admin'), `${ADMIN}\n`);
    writeFileSync(join(dir, 'nats'), 's3cret\n');
    const c = parseEnv(controlEnv, {
      MCP_FLEET_ADMIN_TOKEN_FILE: join(dir, 'admin'),
      NATS_PASSWORD_FILE: join(dir, 'nats'),
      PGPASSWORD_FILE: join(dir, 'nats'),
    });
    expect(c.auth.tokens).toEqual([{ scope: 'admin', token: ADMIN, from: 'MCP_FLEET_ADMIN_TOKEN' }]);
    expect(c.nats.pass).toBe('s3cret');
    expect(c.database.password).toBe('s3cret');
    // The variable wins over its file.
    expect(parseEnv(controlEnv, { NATS_PASSWORD: 'given', NATS_PASSWORD_FILE: join(dir, 'nats') }).nats.pass).toBe(
      'given',
    );
    expect(() => parseEnv(controlEnv, { MCP_FLEET_READ_TOKEN_FILE: join(dir, 'missing') })).toThrow(
      new ConfigError(`cannot read MCP_FLEET_READ_TOKEN_FILE ${join(dir, 'missing')}: ENOENT`),
    );
  });

  it("gives Postgres TLS where the URL does not, the project's names before libpq's", () => {
    const c = parseEnv(controlEnv, {
      DATABASE_URL: 'postgres://db/mcpfleet',
      PGSSLMODE: 'verify-full',
      DATABASE_CA: '/ca.pem',
      PGSSLROOTCERT: '/libpq-ca.pem',
      PGSSLCERT: '/cert.pem',
      MCP_FLEET_SECRET_KEY: ' key ',
      MCP_FLEET_SECRET_KEY_PREVIOUS: 'old',
    });
    expect(c.database).toEqual({
      url: 'postgres://db/mcpfleet',
      password: undefined,
      tls: { sslrootcert: '/ca.pem', sslcert: '/cert.pem', sslkey: undefined, sslmode: 'verify-full' },
    });
    expect(c.secretKey).toEqual({ key: 'key', keyFile: undefined, previous: 'old' });
  });
});

describe("an agent's environment", () => {
  it('gives the region, the metrics listener, the floor and where spans go', () => {
    expect(parseEnv(agentEnv, {})).toMatchObject({
      region: undefined,
      metrics: { host: undefined, port: 9464 },
      tracing: { url: undefined },
    });
    const a = parseEnv(agentEnv, {
      MCP_FLEET_REGION: 'eu-west',
      MCP_FLEET_AGENT_PORT: '9000',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318/',
    });
    expect(a).toMatchObject({
      region: 'eu-west',
      metrics: { port: 9000 },
      tracing: { url: 'http://otel:4318/v1/traces' },
    });
    expect(
      parseEnv(agentEnv, {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/t',
      }).tracing.url,
    ).toBe('http://traces:4318/t');
    expect(
      parseEnv(agentEnv, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318', OTEL_SDK_DISABLED: 'true' }).tracing.url,
    ).toBe(undefined);
    expect(() => parseEnv(agentEnv, { MCP_FLEET_AGENT_PORT: 'x' })).toThrow(
      'MCP_FLEET_AGENT_PORT takes a whole number from 1 to 65535, got x',
    );
  });
});

describe('tracesUrl', () => {
  it('appends /v1/traces to a base endpoint and takes a traces endpoint as is', () => {
    expect(tracesUrl({})).toBeUndefined();
    expect(tracesUrl({ endpoint: 'http://collector:4318/' })).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl({ tracesEndpoint: 'http://c:4318/custom' })).toBe('http://c:4318/custom');
  });
});

describe("the dashboard's environment", () => {
  it("finds control's API, its token and its sign-in", () => {
    const w = parseEnv(webEnv, {
      MCP_FLEET_API_PORT: '7100',
      MCP_FLEET_API_TOKEN: ` ${ADMIN} `,
      MCP_FLEET_WEB_PASSWORD: 'pw',
    });
    expect(w.listen).toEqual({ host: '127.0.0.1', port: 3000 });
    expect(w.apiUrl).toBe('http://127.0.0.1:7100');
    expect(w.apiToken).toBe(ADMIN);
    expect(w.signIn).toEqual({ password: 'pw', tokens: [], dashboardToken: ` ${ADMIN} `, sessionKey: undefined });
    expect(parseEnv(webEnv, { MCP_FLEET_API_URL: 'http://control:7070' }).apiUrl).toBe('http://control:7070');
    expect(parseEnv(webEnv, { PORT: '', MCP_FLEET_WEB_HOST: '' }).listen).toEqual({ host: '127.0.0.1', port: 3000 });
    expect(() => parseEnv(webEnv, { PORT: 'x' })).toThrow(new ConfigError('PORT is not a port number'));
  });
});

describe("up's environment", () => {
  it('gives the dashboard the first admin token when MCP_FLEET_API_TOKEN is unset', () => {
    const u = parseEnv(upEnv, { MCP_FLEET_API_TOKENS: `read:${READ},admin:${ADMIN}` });
    expect(u.dashboardToken).toBe(ADMIN);
    expect(u.api.port).toBe(7070);
    expect(u.agentPort).toBe(7071);
    expect(u.web).toEqual({ host: '127.0.0.1', port: 3000 });
    expect(() => parseEnv(upEnv, { PORT: '0' })).toThrow('PORT takes a whole number from 1 to 65535, got 0');
  });
});

describe("apply's environment", () => {
  it("sends to control on this machine's MCP_FLEET_API_PORT, with MCP_FLEET_API_TOKEN", () => {
    expect(parseEnv(applyEnv, {})).toEqual({ apiUrl: 'http://127.0.0.1:7070', apiToken: undefined });
    expect(parseEnv(applyEnv, { MCP_FLEET_API_PORT: '7100', MCP_FLEET_API_TOKEN: ' t ' })).toEqual({
      apiUrl: 'http://127.0.0.1:7100',
      apiToken: 't',
    });
  });
});

describe('the probe floor', () => {
  it('takes a flag as given (empty is "nothing beyond public") and a variable as unset when empty', () => {
    expect(floorPart('allow', '--allow', '')).toEqual([]);
    expect(floorPart('allow', 'MCP_FLEET_PROBE_ALLOW', ' ')).toBeUndefined();
    expect(() => floorPart('deny', '--deny', '10.0.0.0/33')).toThrow(/^--deny: "10\.0\.0\.0\/33" is not a CIDR/);
    expect(() => floorPart('schemes', '--schemes', ',')).toThrow('--schemes: at least one scheme (http, https)');
  });
});

describe('the variables', () => {
  it('each say what they select, and every secret can come from a file', () => {
    for (const role of ROLES) {
      const vars = variablesOf(role);
      for (const v of vars) expect(v.meta.description, `${role.role} ${v.name}`).not.toBe('');
      const names = new Set(vars.map((v) => v.name));
      for (const v of vars) if (v.meta.fileOf) expect(names, `${role.role} ${v.name}`).toContain(v.meta.fileOf);
    }
  });
});

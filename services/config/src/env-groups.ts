// The variables roles share, in groups (the database, NATS, the secret key, logs, traces, API
// tokens, who may reach a listener, the probe floor), each with what it makes of them. roles.ts
// puts each role's environment together from these.
import { AuthConfigError, checkToken, tokensFromEnv } from '@mcp-fleet/auth/api-tokens';
import { parseAllowedHosts } from '@mcp-fleet/auth/request-guard';
import { z } from 'zod';
import { attempt, commaList, raw, secret, text, variable, wholeNumber } from './env';
import { FLOOR_VARIABLES, type FloorSettings, floorPart } from './probe-floor';

type Out<S extends z.ZodRawShape> = z.output<z.ZodObject<S>>;

// ── The database ────────────────────────────────────────────────────────────────────────────────

export const DATABASE = {
  DATABASE_URL: variable(
    z
      .string()
      .optional()
      .transform((s) => s || undefined),
    { description: 'Postgres; unset = embedded PGlite under `./.mcp-fleet/`' },
  ),
  ...secret(
    'PGPASSWORD',
    z
      .string()
      .optional()
      .transform((s) => s || undefined),
    { description: "Postgres's password when `DATABASE_URL` has none (as libpq reads it)" },
  ),
  PGSSLMODE: variable(text(), { description: 'Postgres TLS mode where `DATABASE_URL` does not set it' }),
  DATABASE_CA: variable(text(), { description: "Postgres TLS: the CA certificate (libpq's `PGSSLROOTCERT` too)" }),
  PGSSLROOTCERT: variable(text(), { description: 'Postgres TLS: the CA certificate, as libpq names it' }),
  DATABASE_CERT: variable(text(), { description: "Postgres TLS: the client certificate (libpq's `PGSSLCERT` too)" }),
  PGSSLCERT: variable(text(), { description: 'Postgres TLS: the client certificate, as libpq names it' }),
  DATABASE_KEY: variable(text(), { description: "Postgres TLS: the client key (libpq's `PGSSLKEY` too)" }),
  PGSSLKEY: variable(text(), { description: 'Postgres TLS: the client key, as libpq names it' }),
};

/** Where the database is and how to reach it: the URL, a password it lacks, TLS where it says none. */
export interface DatabaseSettings {
  /** `postgres://…`; unset = embedded PGlite. */
  url: string | undefined;
  /** PGPASSWORD: for a URL without a password. */
  password: string | undefined;
  /** libpq's TLS parameters, each added where the URL does not set it. */
  tls: {
    sslrootcert?: string | undefined;
    sslcert?: string | undefined;
    sslkey?: string | undefined;
    sslmode?: string | undefined;
  };
}

export function database(e: Out<typeof DATABASE>): DatabaseSettings {
  return {
    url: e.DATABASE_URL,
    password: e.PGPASSWORD,
    tls: {
      sslrootcert: e.DATABASE_CA ?? e.PGSSLROOTCERT,
      sslcert: e.DATABASE_CERT ?? e.PGSSLCERT,
      sslkey: e.DATABASE_KEY ?? e.PGSSLKEY,
      sslmode: e.PGSSLMODE,
    },
  };
}

// ── The key that seals stored credentials ──────────────────────────────────────────────────────

export const SECRET_KEY = {
  MCP_FLEET_SECRET_KEY: variable(text(), {
    description: 'the key sealing stored credentials (32 bytes, base64 or hex; **Credentials**)',
    secret: true,
  }),
  // Read by the key ring itself (its errors name the key file), not as a `<VAR>_FILE`.
  MCP_FLEET_SECRET_KEY_FILE: variable(text(), { description: 'a file holding the key sealing stored credentials' }),
  ...secret('MCP_FLEET_SECRET_KEY_PREVIOUS', text(), {
    description: 'earlier keys, comma-separated: what they sealed still opens (and is sealed again)',
  }),
};

/** The key ring's sources: a key or its file, and earlier keys (the key ring checks them). */
export interface SecretKeySettings {
  key: string | undefined;
  keyFile: string | undefined;
  previous: string | undefined;
}

export function secretKey(e: Out<typeof SECRET_KEY>): SecretKeySettings {
  return {
    key: e.MCP_FLEET_SECRET_KEY,
    keyFile: e.MCP_FLEET_SECRET_KEY_FILE,
    previous: e.MCP_FLEET_SECRET_KEY_PREVIOUS,
  };
}

// ── NATS ────────────────────────────────────────────────────────────────────────────────────────

export const NATS = {
  NATS_URL: variable(text(), { description: 'NATS JetStream (comma-separated servers); unset = in-process queue' }),
  NATS_USER: variable(text(), { description: 'NATS user (with `NATS_PASSWORD`)' }),
  ...secret('NATS_PASSWORD', text(), { description: "NATS user's password" }),
  NATS_TOKEN: variable(text(), { description: 'NATS token', secret: true }),
  NATS_CREDS: variable(text(), { description: 'a NATS `.creds` file' }),
  NATS_CA: variable(text(), { description: 'NATS TLS: the CA certificate file' }),
  NATS_CERT: variable(text(), { description: 'NATS TLS: the client certificate file' }),
  NATS_KEY: variable(text(), { description: 'NATS TLS: the client key file' }),
  MCP_FLEET_NATS_NAMESPACE: variable(text(), {
    description: 'subject and stream prefix',
    default: 'mcpfleet',
  }),
};

/**
 * How many copies of each stream a JetStream cluster keeps: read where the streams are declared
 * (control, `up`), never by agents. One per node at most, and JetStream allows 5.
 */
export const NATS_STREAMS = {
  MCP_FLEET_NATS_REPLICAS: variable(wholeNumber('MCP_FLEET_NATS_REPLICAS', 1, 5), {
    description: "copies of each stream in a JetStream cluster (at most its nodes; an existing stream's are changed)",
    default: '1',
  }),
};

/** The bus options the environment gives (bus's OpenBusOptions): only what is set. */
export interface NatsSettings {
  natsUrl?: string;
  user?: string;
  pass?: string;
  token?: string;
  credsFile?: string;
  namespace?: string;
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
  /** MCP_FLEET_NATS_REPLICAS: set for the roles that declare the streams. */
  replicas?: number;
}

export function nats(e: Out<typeof NATS>): NatsSettings {
  const out: Record<string, unknown> = {};
  const set = (key: keyof NatsSettings, value: string | undefined) => {
    if (value !== undefined) out[key] = value;
  };
  set('natsUrl', e.NATS_URL);
  set('user', e.NATS_USER);
  set('pass', e.NATS_PASSWORD);
  set('token', e.NATS_TOKEN);
  set('credsFile', e.NATS_CREDS);
  // Several fleets (or test runs) can share one NATS server, each under its own subject prefix.
  set('namespace', e.MCP_FLEET_NATS_NAMESPACE);
  const tls = { caFile: e.NATS_CA, certFile: e.NATS_CERT, keyFile: e.NATS_KEY };
  if (tls.caFile || tls.certFile || tls.keyFile)
    out.tls = Object.fromEntries(Object.entries(tls).filter(([, v]) => v !== undefined));
  return out as NatsSettings;
}

// ── Logs ────────────────────────────────────────────────────────────────────────────────────────

export const LOG = {
  LOG_LEVEL: variable(text(), { description: 'pino level', default: 'info' }),
  LOG_FORMAT: variable(
    z
      .string()
      .optional()
      .transform((s) => {
        const asked = s?.trim().toLowerCase();
        return asked === 'json' || asked === 'pretty' ? asked : undefined;
      }),
    { description: '`json` or `pretty`; unset: pretty on a terminal, JSON when piped' },
  ),
  NO_COLOR: variable(raw(), { description: "set to anything: no colours in the terminal's log lines" }),
};

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** How the process logs: the level, the format asked for (unset: by terminal), whether colours may be used. */
export interface LogSettings {
  level: LogLevel;
  format: 'json' | 'pretty' | undefined;
  colour: boolean;
}

export function log(e: Out<typeof LOG>): LogSettings {
  return { level: (e.LOG_LEVEL ?? 'info') as LogLevel, format: e.LOG_FORMAT, colour: !e.NO_COLOR };
}

// ── Traces ──────────────────────────────────────────────────────────────────────────────────────

export const TRACING = {
  OTEL_EXPORTER_OTLP_ENDPOINT: variable(raw(), {
    description: 'where agents send spans (one per probe, a child per HTTP request)',
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: variable(raw(), { description: 'where spans go, as is (no `/v1/traces` added)' }),
  OTEL_SDK_DISABLED: variable(raw(), { description: '`true`: no spans' }),
  OTEL_TRACES_EXPORTER: variable(raw(), { description: '`none`: no spans' }),
};

/** Where spans go (undefined: tracing off). */
export interface TracingSettings {
  url: string | undefined;
}

/** A signal-specific endpoint is used as is, a base endpoint gets `/v1/traces` (as the OTel spec says). */
export function tracesUrl(endpoints: { endpoint?: string | undefined; tracesEndpoint?: string | undefined }) {
  if (endpoints.tracesEndpoint) return endpoints.tracesEndpoint;
  if (endpoints.endpoint) return `${endpoints.endpoint.replace(/\/+$/, '')}/v1/traces`;
  return undefined;
}

export function tracing(e: Out<typeof TRACING>): TracingSettings {
  if (e.OTEL_SDK_DISABLED === 'true' || e.OTEL_TRACES_EXPORTER === 'none') return { url: undefined };
  return {
    url: tracesUrl({ endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT, tracesEndpoint: e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT }),
  };
}

// ── API tokens ──────────────────────────────────────────────────────────────────────────────────

export const API_TOKENS = {
  MCP_FLEET_API_TOKENS: variable(raw(), {
    description: 'API tokens, comma-separated `admin:<token>` / `read:<token>`; unset = auth off',
    secret: true,
  }),
  ...secret('MCP_FLEET_ADMIN_TOKEN', raw(), {
    description: 'one API token of admin scope (with or instead of the list; ≥ 32 chars)',
  }),
  ...secret('MCP_FLEET_READ_TOKEN', raw(), {
    description: 'one API token of read scope (with or instead of the list; ≥ 32 chars)',
  }),
};

export type Scope = 'read' | 'admin';
export interface ApiToken {
  scope: Scope;
  token: string;
  /** Where it was configured ("MCP_FLEET_API_TOKENS entry 2", "MCP_FLEET_ADMIN_TOKEN"). */
  from: string;
}

/** The API tokens, checked (length, characters, one scope per token); `also` adds variables of one scope. */
export function apiTokens(
  e: Out<typeof API_TOKENS> & Record<string, unknown>,
  ctx: z.RefinementCtx,
  also: readonly (readonly [string, Scope])[] = [],
): ApiToken[] {
  const values = Object.fromEntries(
    ['MCP_FLEET_API_TOKENS', 'MCP_FLEET_ADMIN_TOKEN', 'MCP_FLEET_READ_TOKEN', ...also.map(([n]) => n)].map((n) => [
      n,
      e[n] as string | undefined,
    ]),
  );
  return attempt(ctx, () => tokensFromEnv(values, also));
}

export const METRICS_TOKEN = secret('MCP_FLEET_METRICS_TOKEN', raw(), {
  description: 'a bearer token `/metrics` then asks for (unset: `/metrics` is open)',
});

/** Control's API auth: its tokens, and /metrics' own token (never also an API token). */
export interface ApiAuthSettings {
  tokens: ApiToken[];
  metricsToken: string | undefined;
}

export function apiAuth(e: Out<typeof API_TOKENS> & Out<typeof METRICS_TOKEN>, ctx: z.RefinementCtx): ApiAuthSettings {
  const tokens = apiTokens(e, ctx);
  const metricsToken = e.MCP_FLEET_METRICS_TOKEN?.trim() || undefined;
  if (metricsToken)
    attempt(ctx, () => {
      checkToken(metricsToken, 'MCP_FLEET_METRICS_TOKEN');
      if (tokens?.some((t) => t.token === metricsToken))
        throw new AuthConfigError('MCP_FLEET_METRICS_TOKEN is also an API token: give /metrics a token of its own');
    });
  return { tokens, metricsToken };
}

// ── Who may reach a listener ────────────────────────────────────────────────────────────────────

export const EXPOSURE = {
  MCP_FLEET_ALLOW_UNAUTHENTICATED: variable(
    z
      .string()
      .optional()
      .transform((s) => s === '1' || s === 'true'),
    { description: '`1`: listen beyond loopback with auth off (something in front checks)' },
  ),
  MCP_FLEET_ALLOWED_HOSTS: variable(raw(), {
    description: 'host names served with auth off besides loopback names and IP addresses',
  }),
};

/** With auth off: whether to listen beyond loopback anyway, and the host names served besides loopback. */
export interface ExposureSettings {
  allowUnauthenticated: boolean;
  allowedHosts: string[];
}

export function exposure(e: Out<typeof EXPOSURE>, ctx: z.RefinementCtx): ExposureSettings {
  return {
    allowUnauthenticated: e.MCP_FLEET_ALLOW_UNAUTHENTICATED,
    allowedHosts: attempt(ctx, () => parseAllowedHosts(e.MCP_FLEET_ALLOWED_HOSTS)),
  };
}

// ── The probe floor ─────────────────────────────────────────────────────────────────────────────

const floorVariable = (part: keyof typeof FLOOR_VARIABLES, description: string, fallback?: string) =>
  variable(
    z
      .string()
      .optional()
      .transform((s, ctx) => attempt(ctx, () => floorPart(part, FLOOR_VARIABLES[part], s))),
    { description, default: fallback },
  );

export const PROBE_FLOOR = {
  MCP_FLEET_PROBE_ALLOW: floorVariable('allow', 'the probe floor: CIDRs allowed beyond public addresses'),
  MCP_FLEET_PROBE_DENY: floorVariable('deny', 'the probe floor: CIDRs never reached'),
  MCP_FLEET_PROBE_SCHEMES: floorVariable('schemes', "the probe floor's schemes", 'http,https'),
};

export function probeFloor(e: Out<typeof PROBE_FLOOR>): FloorSettings {
  const out: FloorSettings = {};
  if (e.MCP_FLEET_PROBE_ALLOW) out.allow = e.MCP_FLEET_PROBE_ALLOW;
  if (e.MCP_FLEET_PROBE_DENY) out.deny = e.MCP_FLEET_PROBE_DENY;
  if (e.MCP_FLEET_PROBE_SCHEMES) out.schemes = e.MCP_FLEET_PROBE_SCHEMES;
  return out;
}

// ── stdio servers (issue 20): what an agent starts ──────────────────────────────────────────────

export interface StdioSettings {
  /** MCP_FLEET_STDIO_COMMANDS: the programs an agent starts for stdio servers; unset = none. */
  commands: string[];
  /** MCP_FLEET_STDIO_ROOT: where a job's `cwd` is resolved; unset = a job naming a cwd is refused. */
  root: string | undefined;
  /** MCP_FLEET_STDIO_CONCURRENCY, as written (the CLI checks it with its flag); unset = 2 per core. */
  concurrency: string | undefined;
}

export const STDIO = {
  MCP_FLEET_STDIO_COMMANDS: variable(commaList(), {
    description: 'the programs an agent may start for stdio servers, comma-separated (unset: none)',
  }),
  MCP_FLEET_STDIO_ROOT: variable(raw(), {
    description: "the directory a stdio server's `cwd` is resolved under (unset: a fleet entry's cwd is refused)",
  }),
  MCP_FLEET_STDIO_CONCURRENCY: variable(raw(), {
    description: 'stdio processes an agent runs at once (default 2 per core)',
  }),
};

export function stdio(e: Out<typeof STDIO>): StdioSettings {
  return {
    commands: e.MCP_FLEET_STDIO_COMMANDS ?? [],
    root: e.MCP_FLEET_STDIO_ROOT,
    concurrency: e.MCP_FLEET_STDIO_CONCURRENCY,
  };
}

// ── Retention ───────────────────────────────────────────────────────────────────────────────────

/** How often each caller may use the MCP detection tools at /mcp (control's mcp/rate-limit.ts). */
export const MCP_LIMITS = {
  MCP_FLEET_MCP_DETECTIONS_PER_MINUTE: variable(wholeNumber('MCP_FLEET_MCP_DETECTIONS_PER_MINUTE', 1, 10_000), {
    description: "calls a minute each caller may make to /mcp's detect_mcp_protocol and run_check",
    default: '10',
  }),
  MCP_FLEET_MCP_DETECTIONS_BURST: variable(wholeNumber('MCP_FLEET_MCP_DETECTIONS_BURST', 1, 10_000), {
    description: 'how many of those calls are admitted at once',
    default: '5',
  }),
};

export const RETENTION = {
  MCP_FLEET_RUN_RETENTION_DAYS: variable(wholeNumber('MCP_FLEET_RUN_RETENTION_DAYS', 30, 3650), {
    description: 'how long raw runs and detections are kept, in days (see **Retention**)',
    default: '30',
  }),
};

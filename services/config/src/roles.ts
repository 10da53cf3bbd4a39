// Each role's environment, one schema each: `mcp-fleet control`, `mcp-fleet agent`, the dashboard
// on its own (web), `mcp-fleet up` (all three in one process) and `mcp-fleet apply` (a client of
// control's API). Parsed once at the edge (the CLI verb, the dashboard's start) into the settings
// the role's parts take as arguments.
import { z } from 'zod';
import { type Env, ipAddress, raw, roleEnv, secret, variable, variablesOf, wholeNumber, withSecretFiles } from './env';
import {
  API_TOKENS,
  type ApiAuthSettings,
  type ApiToken,
  apiAuth,
  apiTokens,
  DATABASE,
  type DatabaseSettings,
  database,
  EXPOSURE,
  type ExposureSettings,
  exposure,
  LOG,
  type LogSettings,
  log,
  MCP_LIMITS,
  METRICS_TOKEN,
  NATS,
  NATS_STREAMS,
  type NatsSettings,
  nats,
  PROBE_FLOOR,
  probeFloor,
  RETENTION,
  SECRET_KEY,
  type SecretKeySettings,
  STDIO,
  type StdioSettings,
  secretKey,
  stdio,
  TRACING,
  type TracingSettings,
  tracing,
} from './env-groups';
import type { FloorSettings } from './probe-floor';

export type { StdioSettings };

/** Where a listener listens. */
export interface Listen {
  host: string;
  port: number;
}

const API_LISTEN = {
  MCP_FLEET_API_HOST: variable(z.string().default('127.0.0.1'), {
    description: "control's address (beyond loopback only with tokens)",
    default: '127.0.0.1',
  }),
  MCP_FLEET_API_PORT: variable(wholeNumber('MCP_FLEET_API_PORT', 7070, 65_535), {
    description: "control's API and `/metrics`",
    default: '7070',
  }),
};

const TRACE_URL = {
  MCP_FLEET_TRACE_URL: variable(raw(), {
    description: 'a trace UI link for runs, e.g. `http://jaeger:16686/trace/{traceId}`',
  }),
};

/** The dashboard's sign-in as configured (web's auth-core checks and builds it). */
export interface SignInSettings {
  /** MCP_FLEET_WEB_PASSWORD (admin scope), as set. */
  password: string | undefined;
  /** The API tokens, which sign in with their own scope. */
  tokens: ApiToken[];
  /** MCP_FLEET_API_TOKEN: the dashboard's own control token, an admin password too. */
  dashboardToken: string | undefined;
  /** MCP_FLEET_SESSION_KEY, as set (unset: a random key per start). */
  sessionKey: string | undefined;
}

const SIGN_IN = {
  ...secret('MCP_FLEET_API_TOKEN', raw(), {
    description: 'the token the dashboard and `mcp-fleet apply` send to control (admin)',
  }),
  ...secret('MCP_FLEET_WEB_PASSWORD', raw(), {
    description: "the dashboard's sign-in password (≥ 12 chars; API tokens also sign in)",
  }),
  ...secret('MCP_FLEET_SESSION_KEY', raw(), {
    description: 'the key sessions are signed with (≥ 32 chars; unset: random per start)',
  }),
};

type SignInValues = { MCP_FLEET_API_TOKEN?: string; MCP_FLEET_WEB_PASSWORD?: string; MCP_FLEET_SESSION_KEY?: string };

function signIn(e: SignInValues, tokens: ApiToken[]): SignInSettings {
  return {
    password: e.MCP_FLEET_WEB_PASSWORD,
    tokens,
    dashboardToken: e.MCP_FLEET_API_TOKEN,
    sessionKey: e.MCP_FLEET_SESSION_KEY,
  };
}

// ── control ─────────────────────────────────────────────────────────────────────────────────────

export interface ControlSettings {
  api: Listen;
  /** MCP_FLEET_REGIONS: the regions control schedules for without a fleet file (unset: the fleet's). */
  regions: string[] | undefined;
  auth: ApiAuthSettings;
  exposure: ExposureSettings;
  probeFloor: FloorSettings;
  retentionDays: number;
  /** MCP_FLEET_MCP_DETECTIONS_PER_MINUTE and _BURST. */
  mcpDetectionLimits: { perMinute: number; burst: number };
  database: DatabaseSettings;
  secretKey: SecretKeySettings;
  nats: NatsSettings;
  log: LogSettings;
}

function mcpDetectionLimits(e: {
  MCP_FLEET_MCP_DETECTIONS_PER_MINUTE: number;
  MCP_FLEET_MCP_DETECTIONS_BURST: number;
}): { perMinute: number; burst: number } {
  return { perMinute: e.MCP_FLEET_MCP_DETECTIONS_PER_MINUTE, burst: e.MCP_FLEET_MCP_DETECTIONS_BURST };
}

export const controlEnv = roleEnv(
  'control',
  {
    ...API_LISTEN,
    MCP_FLEET_REGIONS: variable(
      z
        .string()
        .optional()
        .transform((s) =>
          s
            ?.split(',')
            .map((r) => r.trim())
            .filter(Boolean),
        ),
      { description: 'the regions to schedule for, comma-separated, when no fleet file names them' },
    ),
    ...API_TOKENS,
    ...METRICS_TOKEN,
    ...EXPOSURE,
    ...PROBE_FLOOR,
    ...STDIO,
    ...RETENTION,
    ...MCP_LIMITS,
    ...DATABASE,
    ...SECRET_KEY,
    ...NATS,
    ...NATS_STREAMS,
    ...LOG,
  },
  (e, ctx): ControlSettings => ({
    api: { host: e.MCP_FLEET_API_HOST, port: e.MCP_FLEET_API_PORT },
    regions: e.MCP_FLEET_REGIONS,
    auth: apiAuth(e, ctx),
    exposure: exposure(e, ctx),
    probeFloor: probeFloor(e),
    retentionDays: e.MCP_FLEET_RUN_RETENTION_DAYS,
    mcpDetectionLimits: mcpDetectionLimits(e),
    database: database(e),
    secretKey: secretKey(e),
    nats: { ...nats(e), replicas: e.MCP_FLEET_NATS_REPLICAS },
    log: log(e),
  }),
);

// ── agent ───────────────────────────────────────────────────────────────────────────────────────

export interface AgentSettings {
  /** MCP_FLEET_REGION (`--region` wins). */
  region: string | undefined;
  /** MCP_FLEET_AGENT_HOST and MCP_FLEET_AGENT_PORT (`--host`, `--metrics-port` win). */
  metrics: { host: string | undefined; port: number };
  probeFloor: FloorSettings;
  /** MCP_FLEET_SOURCE_ADDRESS (`--source-address` wins): the local IP address probes connect from. */
  sourceAddress: string | undefined;
  /** stdio servers (issue 20): `--stdio-commands`, `--stdio-root`, `--stdio-concurrency` win over these. */
  stdio: StdioSettings;
  nats: NatsSettings;
  log: LogSettings;
  tracing: TracingSettings;
}

export const agentEnv = roleEnv(
  'agent',
  {
    MCP_FLEET_REGION: variable(raw(), { description: "`mcp-fleet agent`'s region" }),
    MCP_FLEET_AGENT_HOST: variable(raw(), {
      description: "an agent's address for `/metrics`, `/healthz`, `/readyz`",
      default: '127.0.0.1',
    }),
    MCP_FLEET_AGENT_PORT: variable(wholeNumber('MCP_FLEET_AGENT_PORT', 9464, 65_535), {
      description: "an agent's `/metrics`, `/healthz`, `/readyz` (`up`: 7071 and up)",
      default: '9464',
    }),
    MCP_FLEET_SOURCE_ADDRESS: variable(ipAddress('MCP_FLEET_SOURCE_ADDRESS'), {
      description: "the local IP address an agent's probes connect from (a multi-homed host)",
    }),
    ...STDIO,
    ...PROBE_FLOOR,
    ...NATS,
    ...LOG,
    ...TRACING,
  },
  (e): AgentSettings => ({
    region: e.MCP_FLEET_REGION,
    metrics: { host: e.MCP_FLEET_AGENT_HOST, port: e.MCP_FLEET_AGENT_PORT },
    probeFloor: probeFloor(e),
    sourceAddress: e.MCP_FLEET_SOURCE_ADDRESS,
    stdio: stdio(e),
    nats: nats(e),
    log: log(e),
    tracing: tracing(e),
  }),
);

// ── web: the dashboard on its own ───────────────────────────────────────────────────────────────

export interface WebSettings {
  listen: Listen;
  /** Control's API, for what the dashboard changes. */
  apiUrl: string;
  /** The dashboard's token for control (MCP_FLEET_API_TOKEN), trimmed. */
  apiToken: string | undefined;
  signIn: SignInSettings;
  exposure: ExposureSettings;
  traceUrl: string | undefined;
  database: DatabaseSettings;
  secretKey: SecretKeySettings;
  log: LogSettings;
}

export const webEnv = roleEnv(
  'web',
  {
    PORT: variable(
      z
        .string()
        .optional()
        .transform((s, ctx) => {
          const port = Number(s || 3000);
          if (Number.isInteger(port) && port >= 0 && port <= 65_535) return port;
          ctx.addIssue({ code: 'custom', message: 'PORT is not a port number' });
          return z.NEVER;
        }),
      { description: "the dashboard's port", default: '3000' },
    ),
    MCP_FLEET_WEB_HOST: variable(
      z
        .string()
        .optional()
        .transform((s) => s || '127.0.0.1'),
      { description: "the dashboard's address", default: '127.0.0.1' },
    ),
    MCP_FLEET_API_URL: variable(raw(), {
      description: "control's API for a dashboard run on its own",
      default: 'http://127.0.0.1:7070',
    }),
    MCP_FLEET_API_PORT: variable(raw(), {
      description: "control's port, for the API's address when MCP_FLEET_API_URL is unset",
      default: '7070',
    }),
    ...SIGN_IN,
    ...API_TOKENS,
    ...EXPOSURE,
    ...TRACE_URL,
    ...DATABASE,
    ...SECRET_KEY,
    ...LOG,
  },
  (e, ctx): WebSettings => ({
    listen: { host: e.MCP_FLEET_WEB_HOST, port: e.PORT },
    apiUrl: e.MCP_FLEET_API_URL ?? `http://127.0.0.1:${e.MCP_FLEET_API_PORT ?? '7070'}`,
    apiToken: e.MCP_FLEET_API_TOKEN?.trim() || undefined,
    signIn: signIn(e, apiTokens(e, ctx)),
    exposure: exposure(e, ctx),
    traceUrl: e.MCP_FLEET_TRACE_URL,
    database: database(e),
    secretKey: secretKey(e),
    log: log(e),
  }),
);

// ── up: the whole monitor in one process ────────────────────────────────────────────────────────

export interface UpSettings {
  api: Listen;
  /** The first agent's metrics port (one port per region from here). */
  agentPort: number;
  web: Listen;
  auth: ApiAuthSettings;
  signIn: SignInSettings;
  /** The dashboard's admin token for control: MCP_FLEET_API_TOKEN, or the first admin API token. */
  dashboardToken: string | undefined;
  exposure: ExposureSettings;
  probeFloor: FloorSettings;
  /** Its agents' stdio allowlist, root and slots (issue 20): as an agent's. */
  stdio: StdioSettings;
  retentionDays: number;
  mcpDetectionLimits: { perMinute: number; burst: number };
  traceUrl: string | undefined;
  database: DatabaseSettings;
  secretKey: SecretKeySettings;
  nats: NatsSettings;
  log: LogSettings;
  tracing: TracingSettings;
}

export const upEnv = roleEnv(
  'up',
  {
    ...API_LISTEN,
    MCP_FLEET_AGENT_PORT: variable(wholeNumber('MCP_FLEET_AGENT_PORT', 7071, 65_535), {
      description: "the first agent's `/metrics` (one port per region from here)",
      default: '7071',
    }),
    PORT: variable(wholeNumber('PORT', 3000, 65_535), { description: "the dashboard's port", default: '3000' }),
    MCP_FLEET_WEB_HOST: variable(z.string().default('127.0.0.1'), {
      description: "the dashboard's address",
      default: '127.0.0.1',
    }),
    ...SIGN_IN,
    ...API_TOKENS,
    ...METRICS_TOKEN,
    ...EXPOSURE,
    ...PROBE_FLOOR,
    ...STDIO,
    ...RETENTION,
    ...MCP_LIMITS,
    ...TRACE_URL,
    ...DATABASE,
    ...SECRET_KEY,
    ...NATS,
    ...NATS_STREAMS,
    ...LOG,
    ...TRACING,
  },
  (e, ctx): UpSettings => {
    const auth = apiAuth(e, ctx);
    return {
      api: { host: e.MCP_FLEET_API_HOST, port: e.MCP_FLEET_API_PORT },
      agentPort: e.MCP_FLEET_AGENT_PORT,
      web: { host: e.MCP_FLEET_WEB_HOST, port: e.PORT },
      auth,
      signIn: signIn(e, auth.tokens),
      dashboardToken:
        e.MCP_FLEET_API_TOKEN?.trim() || auth.tokens?.find((t) => t.scope === 'admin')?.token || undefined,
      exposure: exposure(e, ctx),
      probeFloor: probeFloor(e),
      stdio: stdio(e),
      retentionDays: e.MCP_FLEET_RUN_RETENTION_DAYS,
      mcpDetectionLimits: mcpDetectionLimits(e),
      traceUrl: e.MCP_FLEET_TRACE_URL,
      database: database(e),
      secretKey: secretKey(e),
      nats: { ...nats(e), replicas: e.MCP_FLEET_NATS_REPLICAS },
      log: log(e),
      tracing: tracing(e),
    };
  },
);

// ── apply: a client of control's API ────────────────────────────────────────────────────────────

export interface ApplySettings {
  /** Control's API when `--api` is not given: 127.0.0.1 on MCP_FLEET_API_PORT. */
  apiUrl: string;
  /** MCP_FLEET_API_TOKEN (an admin token when control has tokens), trimmed. */
  apiToken: string | undefined;
}

export const applyEnv = roleEnv(
  'apply',
  {
    MCP_FLEET_API_PORT: variable(raw(), { description: "control's port on this machine", default: '7070' }),
    ...secret('MCP_FLEET_API_TOKEN', raw(), { description: 'an admin token of control, sent as a bearer token' }),
  },
  (e): ApplySettings => ({
    apiUrl: `http://127.0.0.1:${e.MCP_FLEET_API_PORT ?? 7070}`,
    apiToken: e.MCP_FLEET_API_TOKEN?.trim() || undefined,
  }),
);

// ── mcp, credentials: clients of control's API that may run on another machine ─────────────────

export interface ApiClientSettings {
  /** MCP_FLEET_API_URL, else control's port on this machine (MCP_FLEET_API_PORT). */
  apiUrl: string;
  apiToken: string | undefined;
  log: LogSettings;
}

/** `mcp-fleet mcp` and `mcp-fleet credentials`: where control's API is, and a token of it. */
export const apiClientEnv = roleEnv(
  'api client',
  {
    MCP_FLEET_API_URL: variable(raw(), {
      description: "control's API for `mcp-fleet mcp` and `credentials`",
      default: 'http://127.0.0.1:7070',
    }),
    MCP_FLEET_API_PORT: variable(raw(), {
      description: "control's port, for the API's address when MCP_FLEET_API_URL is unset",
      default: '7070',
    }),
    ...secret('MCP_FLEET_API_TOKEN', raw(), {
      description: "a token of control's API (read: the read-only tools; admin: all of them, and changes)",
    }),
    ...LOG,
  },
  (e): ApiClientSettings => ({
    apiUrl: e.MCP_FLEET_API_URL?.trim() || `http://127.0.0.1:${e.MCP_FLEET_API_PORT?.trim() || '7070'}`,
    apiToken: e.MCP_FLEET_API_TOKEN?.trim() || undefined,
    log: log(e),
  }),
);

/** Every role's environment, for the README's table and the deploy checks. */
export const ROLES = [controlEnv, agentEnv, webEnv, upEnv, applyEnv, apiClientEnv] as const;

/**
 * The environment with every secret's `<VAR>_FILE` read into `<VAR>`: what the fleet file's
 * `${NAME}` expands from where the file is read (a header may reference a mounted secret).
 */
export function secretEnv(env: Env): Record<string, string | undefined> {
  const names = ROLES.flatMap((r) => variablesOf(r).flatMap((v) => (v.meta.fileOf ? [v.meta.fileOf] : [])));
  return withSecretFiles(env, [...new Set(names)]);
}

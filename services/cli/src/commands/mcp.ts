// `mcp-fleet mcp`: the monitor's MCP server over stdio, for a desktop client that starts it as a
// child process. The same server control serves at /mcp (the same tools, resources and prompt),
// whose tools call a running control's API over HTTP with a token: what the token may do is what
// the client sees (a read token lists the read-only tools only), and control keeps enforcing it.
//
// stdout belongs to JSON-RPC: nothing else may be written there, so logs go to stderr, and every
// problem at start (a bad setting, a control that cannot be reached, a refused token) is one line
// on stderr and exit code 2, before anything is served.
import { checkToken } from '@mcp-fleet/auth/api-tokens';
import { apiClientEnv, ConfigError, parseEnv, secretFromEnv } from '@mcp-fleet/config';
import {
  ApiCallError,
  type ApiCaller,
  DetectionLimiter,
  httpCaller,
  monitorMcpServer,
  tokenPrincipal,
} from '@mcp-fleet/control';
import { configureLogs, createLogger, prettyStream } from '@mcp-fleet/log';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { parse, positiveInt } from '../args';
import { EXIT, UsageError } from '../usage';

const OPTIONS = {
  'api-url': { type: 'string' },
  'token-file': { type: 'string' },
  timeout: { type: 'string' },
} as const;

export async function mcpCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const settings = parseEnv(apiClientEnv, process.env);
  configureLogs(settings.log);
  const url = apiUrl(values['api-url'] ?? settings.apiUrl, values['api-url'] ? '--api-url' : 'MCP_FLEET_API_URL');
  // --token-file wins over the environment; read as MCP_FLEET_API_TOKEN_FILE is (bounded, never echoed).
  const tokenFile = values['token-file'];
  const token = tokenFile
    ? tokenFrom(fileToken(tokenFile), '--token-file')
    : settings.apiToken && tokenFrom(settings.apiToken, 'MCP_FLEET_API_TOKEN');
  const timeoutMs = positiveInt(values.timeout, '--timeout', 30_000, 600_000);
  // Logs on stderr only: pretty for a person at a terminal, JSON lines for the client's log file.
  const logger = createLogger(
    'mcp-fleet-mcp',
    undefined,
    process.stderr.isTTY ? prettyStream(settings.log.colour, process.stderr) : process.stderr,
  );

  let caller: ApiCaller;
  try {
    // Asks GET /api/whoami: reachable, the token known, and its scope (which tools to list). The
    // answer crosses a trust boundary (whatever listens at that URL): httpCaller refuses a 2xx that
    // names no scope (an HTML page, another service) with a 502.
    caller = await httpCaller({ url: url.href, token, timeoutMs });
  } catch (err) {
    process.stderr.write(`mcp-fleet mcp: ${startFailure(err, url, token !== undefined)}\n`);
    return EXIT.usage;
  }
  logger.info({ api: url.origin, scope: caller.scope }, `serving the monitor over stdio, calling ${url.origin}`);

  // The detection tools make control send traffic: bounded here as at /mcp (per token), so that an
  // agent in a loop on this pipe cannot turn the monitor into a load generator either.
  const limiter = new DetectionLimiter();
  const principal = token ? tokenPrincipal(token) : 'local';
  // Both eras: a 2026-07-28 client opens with server/discover, a 2025 one with initialize.
  const handle = serveStdio(() => monitorMcpServer({ caller, limiter, principal }), {
    legacy: 'serve',
    onerror: (err) => logger.warn({ err: err.message }, 'MCP connection error'),
  });
  await untilClosed();
  await handle.close();
  logger.info('the client closed stdin (or a signal came): stopped');
  return EXIT.ok;
}

/** The client closed our stdin (it is done with us), or a signal asked us to stop. */
function untilClosed(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.stdin.off('end', done);
      process.stdin.off('close', done);
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.stdin.on('end', done);
    process.stdin.on('close', done);
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}

/** Control's API: http or https, no credentials in it (the token has its own variable). */
function apiUrl(raw: string, from: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${from} is not a URL: ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${from} must be http:// or https://, not ${url.protocol}`);
  if (url.username || url.password)
    throw new UsageError(`${from} must not hold credentials: set MCP_FLEET_API_TOKEN (or --token-file) instead`);
  return url;
}

/** --token-file, read as MCP_FLEET_API_TOKEN_FILE is (at most 64 KiB, never echoed); errors name the flag. */
function fileToken(path: string): string | undefined {
  try {
    return secretFromEnv('MCP_FLEET_API_TOKEN', { MCP_FLEET_API_TOKEN_FILE: path });
  } catch (err) {
    if (err instanceof ConfigError)
      throw new ConfigError(err.message.replace('MCP_FLEET_API_TOKEN_FILE', '--token-file'));
    throw err;
  }
}

/** A token as control would accept one; the message names where it came from, never its value. */
function tokenFrom(value: string | undefined, from: string): string | undefined {
  const token = value?.trim();
  if (!token) throw new ConfigError(`${from} holds no token`);
  try {
    return checkToken(token, from);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/**
 * Why the first call to control failed, as one sentence with what to do. What the far end said is
 * quoted (whatever answers at that URL is untrusted): control characters shown, never sent to a terminal.
 */
export function startFailure(err: unknown, url: URL, withToken: boolean): string {
  return visible(failure(err, url, withToken));
}

function visible(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

function failure(err: unknown, url: URL, withToken: boolean): string {
  const where = `control's API at ${url.origin}`;
  if (err instanceof ApiCallError) {
    if (err.status === 502)
      return `${url.origin} answered GET /api/whoami without a token scope: is MCP_FLEET_API_URL (or --api-url) an mcp-fleet control?`;
    if (err.status === 401)
      return withToken
        ? `${where} refused the token (${err.message}): set MCP_FLEET_API_TOKEN, MCP_FLEET_API_TOKEN_FILE or --token-file to one of its API tokens`
        : `${where} needs a token (${err.message}): set MCP_FLEET_API_TOKEN, MCP_FLEET_API_TOKEN_FILE or --token-file`;
    if (err.status === 403) return `${where} refused the token: ${err.message}`;
    if (err.status === 404)
      return `${where} has no /api/whoami: is MCP_FLEET_API_URL (or --api-url) an mcp-fleet control of this version?`;
    return `${where} answered HTTP ${err.status}: ${err.message}`;
  }
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return `${where} did not answer in time: is control running there?`;
  const cause = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
  return `cannot reach ${where} (${cause}): is control running? Set MCP_FLEET_API_URL or --api-url to its address`;
}

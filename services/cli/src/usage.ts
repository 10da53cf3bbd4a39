// Usage text and the error a bad argument raises: a clear line and exit code 2, never a stack trace.
// Light on purpose (no imports): every verb and `--help` load it.

export class UsageError extends Error {}

/** Exit codes. detect and handshake give each cause (probe's cause.ts) its own, so scripts can branch. */
export const EXIT = {
  ok: 0,
  /** detect: NONE with no single cause (not an MCP server); handshake: any other failure. */
  failed: 1,
  usage: 2,
  /** detect: RATE_LIMITED; handshake: rate_limited. */
  rateLimited: 3,
  unreachable: 4,
  dns: 5,
  tls: 6,
  authRequired: 7,
  serverError: 8,
  timeout: 9,
  policy: 10,
  internal: 70,
} as const;

/** Each verb's usage, printed by `mcp-fleet <verb> --help` and, together, by `mcp-fleet --help`. */
export const VERB_USAGE: Record<string, string> = {
  detect: `mcp-fleet detect <url> [--header 'Name: value']... [--timeout ms] [--json]
  mcp-fleet detect --stdio [--env NAME[=value]]... [--cwd DIR] [--timeout ms] [--json] -- <command> [args...]
                                       which revisions the server accepts (at most 8 requests);
                                       --timeout bounds each request (default 10000); --stdio
                                       starts the command once per revision and speaks over its
                                       stdin/stdout (environment: PATH and each --env only)`,
  handshake: `mcp-fleet handshake <url> --revision newest|<revision> [--current <revision>]
                      [--header 'Name: value']... [--timeout ms] [--json]
  mcp-fleet handshake --stdio --revision newest|<revision> [--env NAME[=value]]... [--cwd DIR]
                      [--timeout ms] [--json] -- <command> [args...]
                                       one handshake run, newest supported or pinned; --current is
                                       the revision a newest-supported test spoke last time`,
  check: `mcp-fleet check <url> [--protocol legacy|auto|<revision>] [--header 'Name: value']...
                  [--no-probe] [--json] [--junit FILE] [--format conformance]
                  [--cross-era [--protocols a,b,c]]
  mcp-fleet check --stdio [--protocol …] [--env NAME[=value]]... [--cwd DIR] [--no-probe] [--json]
                  [--junit FILE] [--format conformance] -- <command> [args...]
                                       conformance by era: the checks a client on the negotiated
                                       era relies on (auto: discover first, legacy fallback);
                                       --no-probe skips the raw bad-input probes; --junit writes
                                       a JUnit XML report; --format conformance prints the
                                       official conformance suite's check shape; --cross-era also
                                       connects once per protocol (default: every one detection
                                       finds) and checks each serves the same tools, resources,
                                       prompts and capabilities`,
  record: `mcp-fleet record <url> --out FILE [--listen 127.0.0.1:0] [--header 'Name: value']...
                  [--script] [--allow cidrs] [--deny cidrs] [--schemes list]
                                       a recording proxy on loopback: point an MCP client at the
                                       URL it prints; each request and answer goes to FILE (JSONL,
                                       credentials redacted) until Ctrl-C; --script then prints
                                       the steps as a fleet file's steps:`,
  replay: `mcp-fleet replay FILE <url> [--protocol <revision>] [--header 'Name: value']...
                  [--allow-writes] [--json] | replay FILE --print-script
                                       send a recorded session again and judge each answer: same,
                                       newer_equivalent, protocol_error or broken (exit 1 when any
                                       is broken); tools not marked readOnlyHint are not sent
                                       without --allow-writes`,
  bench: `mcp-fleet bench handshake <url> [--revision newest|<revision>] [--concurrency N]
                      [--seconds S] [--header 'Name: value']... [--timeout ms] [--json]
                                       handshakes per second against one server`,
  sim: `mcp-fleet sim [--port base] [--drift] start the simulated fleet and print its targets`,
  demo: `mcp-fleet demo [--port base] [--once] [--verbose]
                                       start the fleet and detect every target`,
  up: `mcp-fleet up [--fleet mcp-fleet.yaml] [--no-dashboard] [--data-dir dir] [--demo-interval seconds]
                  [--source-address ip | region=ip,region=ip]
                                       the whole monitor on one machine (no file: the demo fleet);
                                       --source-address: where its agents' probes connect from`,
  control: `mcp-fleet control [--fleet file] [--data-dir dir] [--host addr]
                                       the control plane alone (DATABASE_URL, NATS_URL)`,
  agent: `mcp-fleet agent --region <name> [--concurrency N|auto] [--metrics-port P] [--host addr]
                  [--ack-wait ms] [--allow cidrs] [--deny cidrs] [--schemes list] [--source-address ip]
                  [--stdio-commands list] [--stdio-root dir] [--stdio-concurrency N]
                                       a regional probe agent (NATS_URL); its own probe floor
                                       (default: public addresses, http and https) bounds every job;
                                       --source-address: the local IP its probes connect from;
                                       --stdio-commands: the only programs it starts for stdio
                                       servers (default none), at most N at once (2 per core)`,
  apply: `mcp-fleet apply [file] [--api url] [--dry-run] [--yes] [--json]
                                       check the fleet file (default mcp-fleet.yaml), expand
                                       its \${NAME} from this environment, show control's plan
                                       and apply it; retiring anything asks first (--yes in
                                       scripts; without a terminal it is refused, exit 2)`,
  validate: `mcp-fleet validate <file>...
                                       check fleet files offline, no control needed
                                       (exit 0 valid, 2 invalid: file:line:column: problem)`,
  mcp: `mcp-fleet mcp [--api-url url] [--token-file file] [--timeout ms]
                                       the monitor's MCP server over stdio, for a desktop client:
                                       its tools call control's API (MCP_FLEET_API_URL, default
                                       http://127.0.0.1:7070) with MCP_FLEET_API_TOKEN (or its
                                       _FILE); a read token lists the read-only tools only; logs
                                       on stderr; control unreachable or the token refused at
                                       start: exit 2`,
  secrets: `mcp-fleet secrets init --dir <dir> [--region <name>]... [--owner [<role>=]<uid>[:<gid>]]
                                       generate what a compose stack needs where missing (0600)`,
  credentials: `mcp-fleet credentials add <name> --url <url> | --origin <origin> --header 'Name: value'...
                  | list | rm <id>   [--api url] [--json]
                                       control's named credentials (MCP_FLEET_API_URL,
                                       MCP_FLEET_API_TOKEN): stored sealed, sent to their origin
                                       only, used by id (credentialId); values are never shown`,
};

const EXIT_CODES = `Exit codes:
  0   detect: DETECTED; handshake: success or downgrade; check: pass (no MUST check failed)
  1   detect: NONE, not an MCP server; handshake: any other failure (not MCP, protocol error,
      the pinned revision not spoken); check: a MUST check failed, or it could not connect
      (check has no code per cause: 0, 1, 2 and 70 only)
  2   usage error (bad arguments); up, control, agent: a port or data directory in use;
      mcp: control unreachable, or the token refused, at start;
      validate, apply: an invalid fleet file; apply: it would retire without --yes and no
      terminal to ask
  3   rate limited (HTTP 429)
  4   unreachable (connection refused or reset)
  5   DNS (the name does not resolve, or the lookup timed out)
  6   TLS (certificate expired, self-signed, untrusted or for another name)
  7   auth required (HTTP 401 or 403: pass --header 'Authorization: …')
  8   server error (HTTP 5xx)
  9   timeout
  10  refused by policy (a probe floor)
  70  internal error`;

const CHECK_EXIT_CODES = `Exit codes:
  0   pass: the connection opened and no MUST check failed (SHOULD failures are warnings)
  1   a MUST check failed, or the connection did not open (the output says why); with
      --cross-era, a cross-era MUST check failed too
  2   usage error (bad arguments, a bad --protocol or --protocols, --junit without a file
      or one that cannot be written)
  70  internal error`;

const REVISIONS_LINE = 'Revisions: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28.';

export const USAGE = `mcp-fleet: watch which MCP protocol revisions a fleet of servers speaks

Usage:
${Object.values(VERB_USAGE)
  .map((u) => `  ${u}`)
  .join('\n')}
  mcp-fleet <verb> --help              one verb's usage
  mcp-fleet --version

${REVISIONS_LINE}

${EXIT_CODES}
`;

/** `mcp-fleet <verb> --help`: the verb's usage, the revisions where they matter, the exit codes where they vary. */
export function verbUsage(verb: string): string {
  const probes = verb === 'detect' || verb === 'handshake' || verb === 'bench' || verb === 'check' || verb === 'replay';
  return `Usage:\n  ${VERB_USAGE[verb]}\n${probes ? `\n${REVISIONS_LINE}\n` : ''}${verb === 'detect' || verb === 'handshake' ? `\n${EXIT_CODES}\n` : ''}${verb === 'check' ? `\n${CHECK_EXIT_CODES}\n` : ''}`;
}

/**
 * node:util parseArgs's errors in one line each (its own run to three lines of advice about `--`):
 * "unknown option --frob", "--header needs a value".
 */
export function parseArgsError(err: unknown): UsageError {
  const message = (err as Error)?.message ?? String(err);
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (unknown) return new UsageError(`unknown option ${unknown[1]}`);
  const missing = /^Option '(?:-\w, )?(--?[\w-]+)[^']*' argument missing/.exec(message);
  if (missing) return new UsageError(`${missing[1]} needs a value`);
  const ambiguous = /^Option '(--?[\w-]+)' argument is ambiguous/.exec(message);
  if (ambiguous)
    return new UsageError(
      `${ambiguous[1]} needs a value, and the next argument starts with "-" (write ${ambiguous[1]}=<value> if that is the value)`,
    );
  const noValue = /^Option '(--?[\w-]+)' does not take an argument/.exec(message);
  if (noValue) return new UsageError(`${noValue[1]} takes no value`);
  return new UsageError(message.split('\n')[0] ?? message);
}

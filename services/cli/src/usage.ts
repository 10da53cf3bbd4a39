// Usage text and the error a bad argument raises: a clear line and exit code 2, never a stack trace.

export class UsageError extends Error {}

export const EXIT = {
  ok: 0,
  /** detect: NONE; handshake: the run failed. */
  failed: 1,
  usage: 2,
  /** detect: RATE_LIMITED. */
  rateLimited: 3,
  internal: 70,
} as const;

export const USAGE = `mcp-fleet: watch which MCP protocol revisions a fleet of servers speaks

Usage:
  mcp-fleet detect <url> [--header 'Name: value']... [--timeout ms] [--json]
  mcp-fleet handshake <url> --revision newest|<revision> [--current <revision>]
                      [--header 'Name: value']... [--timeout ms] [--json]
  mcp-fleet bench handshake <url> [--revision newest|<revision>] [--concurrency N]
                      [--seconds S] [--header ...] [--timeout ms] [--json]
  mcp-fleet sim [--port base] [--drift] start the simulated fleet and print its targets
  mcp-fleet demo [--port base] [--once] start the fleet and detect every target
  mcp-fleet up [--fleet mcp-fleet.yaml] [--no-dashboard] [--data-dir dir]
                                       the whole monitor on one machine (no file: the demo fleet)
  mcp-fleet control [--fleet file] [--data-dir dir]
                                       the control plane alone (DATABASE_URL, NATS_URL)
  mcp-fleet agent --region <name> [--concurrency N] [--metrics-port P] [--ack-wait ms]
                  [--allow cidrs] [--deny cidrs] [--schemes list]
                                       a regional probe agent (NATS_URL); its own probe floor
                                       (default: public addresses, http and https) bounds every job
  mcp-fleet apply [--fleet mcp-fleet.yaml] [--api url]
                                       check the fleet file, expand its \${NAME} from this
                                       environment, send it to the running control
  mcp-fleet secrets init --dir <dir> [--region <name>]... [--owner [<role>=]<uid>[:<gid>]]
                                       generate what a compose stack needs where missing (0600)

Revisions: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28.

Exit codes:
  0  detect: DETECTED; handshake: success or downgrade
  1  detect: NONE; handshake: any other outcome
  2  usage error (bad arguments, a port or data directory in use)
  3  detect: RATE_LIMITED
  70 internal error
`;

// The simulated fleet's stdio servers (stdio/server.mjs): real MCP servers built with the official
// SDKs, started as processes and spoken to over stdin/stdout, and hostile ones. Each is a command
// spec a probe runs; nothing listens, so there is nothing to start or stop here.
import { fileURLToPath } from 'node:url';
import type { CommandSpec } from '@mcp-fleet/probe';

export const STDIO_SERVERS = {
  v1: 'SDK 1.32 McpServer on StdioServerTransport: legacy only (initialize); server/discover gets -32601',
  v2: 'SDK 2.4 serveStdio: both eras (server/discover 2026-07-28, or initialize)',
  'v2-modern-only': "SDK 2.4 serveStdio with legacy: 'reject': 2026-07-28 only, initialize gets -32022",
  'logs-on-stdout': 'SDK 1.32, plus console.log lines on stdout at start (the classic mistake)',
  silent: 'reads stdin, never answers; exits when stdin closes',
  'floods-stdout': 'writes 60 KB log lines to stdout without end',
  'exits-at-once': 'writes one line to stderr and exits with code 3 before reading anything',
  'ignores-sigterm': 'SDK 1.32, but neither stdin closing nor SIGTERM ends it: only SIGKILL',
} as const;

export type StdioServerKind = keyof typeof STDIO_SERVERS;
export const STDIO_SERVER_KINDS = Object.keys(STDIO_SERVERS) as StdioServerKind[];

const SCRIPT = fileURLToPath(new URL('../stdio/server.mjs', import.meta.url));

/**
 * The command that starts one: this Node on the script, with an environment of its own (none of
 * the test's or bench's). `env` adds variables (e.g. a fake credential a test expects redacted);
 * `marker` is an extra argument the server ignores, so a test can find its processes in /proc.
 */
export function stdioServer(
  kind: StdioServerKind,
  opts: { env?: Record<string, string>; marker?: string } = {},
): CommandSpec {
  const args = opts.marker === undefined ? [SCRIPT, kind] : [SCRIPT, kind, opts.marker];
  return { command: process.execPath, args, env: { ...opts.env } };
}

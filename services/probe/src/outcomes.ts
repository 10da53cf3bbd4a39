// The closed set of run outcomes. They become metric label values: keep the set small and stable.

export const OUTCOMES = {
  success: 'The handshake succeeded.',
  downgrade: 'The server answered with an older revision than the one offered.',
  unsupported_version: 'The server does not speak the requested revision.',
  auth_required: 'The server asked for credentials (HTTP 401 or 403).',
  rate_limited: 'The server rate-limited the probe (HTTP 429).',
  server_error: 'The server failed (HTTP 5xx).',
  timeout: 'The server did not answer in time.',
  unreachable: 'The server could not be reached.',
  not_mcp: 'The target did not identify itself as an MCP server.',
  protocol_error: 'The server broke the protocol.',
} as const;

export type Outcome = keyof typeof OUTCOMES;
export const OUTCOME_NAMES = Object.keys(OUTCOMES) as Outcome[];

/** Outcomes that mean the server is speaking MCP fine (a downgrade is reported, not failed). */
export const PASSING_OUTCOMES: readonly Outcome[] = ['success', 'downgrade'];

export function isPassing(outcome: Outcome | string): boolean {
  return PASSING_OUTCOMES.includes(outcome as Outcome);
}

// What an operator at a terminal can do about each cause (probe's cause.ts names it; the
// dashboard words its own hints for its form).
import type { Cause } from '@mcp-fleet/probe';

export const CAUSE_HINTS: Record<Cause, string> = {
  unreachable: 'Is the server running, and listening at this address and port?',
  dns: "Check the host name, and that this machine's DNS resolves it.",
  tls: "The server's certificate must be current, for this host name, and from a CA this machine trusts (NODE_EXTRA_CA_CERTS adds one).",
  auth_required: "Pass a credential the server accepts: --header 'Authorization: Bearer …'.",
  server_error: 'The server is failing: try again later, or look at its logs.',
  timeout: 'No answer in time: raise --timeout, or check that the server is answering.',
  policy: 'The probe floor (MCP_FLEET_PROBE_ALLOW, MCP_FLEET_PROBE_DENY) does not let probes reach this address.',
};

/** The hint for a cause met over stdio, where "address and port" mean nothing. */
export function causeHint(cause: Cause, overStdio: boolean): string {
  if (overStdio && cause === 'unreachable')
    return 'Does the command start and keep running? Its stderr (below, and whole in --json) may say why not.';
  return CAUSE_HINTS[cause];
}

// The environment variables each role reads: its schema in services/config (the one the process
// parses at its start). Deploy files may set a role's container only these.
import { join } from 'node:path';
import { agentEnv, controlEnv, variablesOf, webEnv } from '@mcp-fleet/config';

export const REPO = join(import.meta.dirname, '..', '..');

export type Role = 'control' | 'agent' | 'web';

/** Read by Next.js itself (the dashboard's own server, web/serve.ts, hands requests to it). */
const NEXT_READS = ['HOSTNAME', 'NODE_ENV', 'NEXT_TELEMETRY_DISABLED'];

/** The variables `role`'s process reads: its schema's, `<VAR>_FILE` of each secret included. */
export function roleVariables(role: Role): Set<string> {
  const schema = { control: controlEnv, agent: agentEnv, web: webEnv }[role];
  return new Set([...variablesOf(schema).map((v) => v.name), ...(role === 'web' ? NEXT_READS : [])]);
}

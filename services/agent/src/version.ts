import pkg from '../package.json' with { type: 'json' };

/** The version an agent reports in heartbeats and `mcp_agent_info`, unless told otherwise. */
export const AGENT_VERSION: string = pkg.version;

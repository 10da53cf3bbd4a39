// @mcp-fleet/agent: the regional probe agent, its metrics, its spans and how they are exported.

export { nakDelayMs } from '@mcp-fleet/bus';
export { type Agent, type AgentOptions, startAgent } from './agent';
export { AgentMetrics, DURATION_BUCKETS, type JobResult, revisionLabel } from './metrics';
export { FLEET_ATTR, MCP_ATTR, SPAN_NAMES, spanUrl, TRANSPORT } from './spans';
export { ALLOWLIST_SETTING, parseCommandList, StdioGate } from './stdio-gate';
export { defaultStdioConcurrency, STDIO_PER_CORE, StdioSlots } from './stdio-slots';
export { checkSourceAddress, SourceAddressError } from './target-policy';
export { startTracing, type Tracing, type TracingOptions } from './tracing';
export { AGENT_VERSION } from './version';

// The fleet file is config's (one schema); parseFleet stays here too for the monitor's wiring in tests and tools.
export { FleetFileError, parseFleet } from '@mcp-fleet/config';
export { type ApplyOptions, type ApplySummary, applyFleet, PlanChangedError } from './apply';
export {
  type Access,
  API_AUTH_HOW,
  ApiAuth,
  AuthConfigError,
  apiAuthFromEnv,
  assertSafeBind,
  isLoopbackHost,
  MIN_TOKEN_LENGTH,
  type Scope,
  tokensFromEnv,
} from './auth';
export { type Control, type ControlOptions, startControl } from './control';
export type { RouteInfo } from './http';
export { ApiCallError, type ApiCaller, httpCaller, routerCaller } from './mcp/caller';
export { DEFAULT_DETECTION_LIMITS, DetectionLimiter, type DetectionLimits } from './mcp/rate-limit';
export { FLEET_SUMMARY_URI, SERVER_URI_TEMPLATE } from './mcp/resources';
export {
  MONITOR_VERSION,
  type MonitorMcpOptions,
  monitorMcpServer,
  type ToolOutcome,
  tokenPrincipal,
} from './mcp/server';
export { MONITOR_TOOLS } from './mcp/tools';
export { freshnessMs, type ScheduleEntry, Scheduler, STALE_GRACE_MS, staleAt } from './scheduler';
export { detectionJobId, handshakeJobId, offsetFor, slotStart } from './slots';

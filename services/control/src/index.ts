export { type ApplyOptions, type ApplySummary, applyFleet, PlanChangedError } from './apply';
export {
  type Access,
  API_AUTH_HOW,
  ApiAuth,
  AuthConfigError,
  allowedHostsFromEnv,
  allowUnauthenticated,
  apiAuthFromEnv,
  assertSafeBind,
  isLoopbackHost,
  MIN_TOKEN_LENGTH,
  type Scope,
  tokensFromEnv,
} from './auth';
export { type Control, type ControlOptions, startControl } from './control';
export { formatDuration, parseDuration } from './durations';
export {
  type Expansion,
  expandFleetFile,
  type FleetDefinition,
  FleetFileError,
  type FleetObject,
  fleetFromObject,
  loadFleetFile,
  PROBE_OWNED_HEADERS,
  parseFleet,
  type ServerDefinition,
} from './fleet-file';
export { type FleetProblem, problemLine } from './fleet-problems';
export type { RouteInfo } from './http';
export { freshnessMs, type ScheduleEntry, Scheduler, STALE_GRACE_MS, staleAt } from './scheduler';
export { detectionJobId, handshakeJobId, offsetFor, slotStart } from './slots';

export { BOUNDS, CUT_MARK, cut } from './bounds';
export {
  CAUSE_NAMES,
  CAUSES,
  type Cause,
  type CauseEvidence,
  causeOf,
  causeSentence,
  learntNothing,
  sharedCause,
} from './cause';
export { CLIENT_INFO } from './client-info';
export * from './conformance';
export * from './conformance-checks';
export { DEFAULT_TIMEOUT_MS, ProbeContext, type ProbeOptions } from './context';
export { TEST_DEPTHS, type TestDepth } from './depths';
export {
  DETECTION_MAX_MS,
  DETECTION_MAX_REQUESTS,
  type Detection,
  type DetectionOutcome,
  detect,
  type RevisionDetection,
} from './detect';
export { DNS_LIMITS, type DnsLimits, DnsLookups, type Resolver, systemDns } from './dns';
export { type EraMove, eraMove } from './era-move';
export type { Evidence } from './evidence';
export { defaultDispatcher, type Exchange, onPipe, type ReachabilityFailure } from './exchange';
export {
  type Assertion,
  HANDSHAKE_MAX_REQUESTS,
  type HandshakeOptions,
  type HandshakeRun,
  handshake,
  type RevisionChoice,
} from './handshake';
export { LOOKUP_MAX_REQUESTS, NOT_IDENTIFIED } from './lookup';
export { isLoopbackAddress } from './loopback';
export type { ServerInfo } from './opening';
export { isPassing, OUTCOME_NAMES, OUTCOMES, type Outcome, PASSING_OUTCOMES } from './outcomes';
export { displayUrl, redact, redactStrings, secretsOf } from './redact';
export * from './revisions';
export { COMPARE_MAX_STEPS, compareAnswer, type Recorded, type ReplayVerdict } from './script/compare';
export { parsePath, valueAt } from './script/json-path';
export { REPLAY_MAX_MS, type ReplayOptions, type ReplayRun, type ReplayStep, replaySession } from './script/replay';
export { runScript, SCRIPT_MAX_MS, SCRIPT_MAX_REQUESTS, type ScriptOptions } from './script/run';
export * from './script/script';
export * from './script/session';
export { STDIO_LIMITS, type StdioLimits } from './stdio/child';
export { type CommandSpec, displayCommand, isCommandSpec, type Target } from './stdio/command';
export type { StdioFinding, StdioFindingId, StdioReport } from './stdio/report';
export {
  CANONICAL_MAX_DEPTH,
  canonicalJson,
  SurfaceBodyError,
  sha256Hex,
  snapshotOf,
  surfaceFromBody,
} from './surface/canonical';
export {
  CROSS_ERA_CHECK_IDS,
  CROSS_ERA_LEVELS,
  CROSS_ERA_MAX_DIFFERENCES,
  type CrossEraCheckId,
  type CrossEraOptions,
  crossEra,
} from './surface/cross-era';
export { diffSurfaces, SCHEMA_MAX_DEPTH } from './surface/diff';
export { fitSurface, isCutSchema, SCHEMA_CUT_KEY, sameText } from './surface/fit';
export {
  readSurface,
  readSurfaceAt,
  readSurfaces,
  SURFACE_MAX_PAGES,
  SURFACE_READ_MAX_MS,
  SURFACE_READ_MAX_REQUESTS,
  type SurfaceRead,
} from './surface/read';
export * from './surface/surface';
export {
  DEFAULT_SCHEMES,
  describeRanges,
  guardedDispatcher,
  PolicyRefusal,
  PUBLIC_ONLY,
  parseCidr,
  TargetPolicy,
  type TargetPolicyOptions,
  type TargetPolicyRanges,
} from './target-policy';
export {
  hasUrlCredentials,
  maskedParts,
  maskUrl,
  URL_MASK,
  unmaskUrl,
  urlSecretParts,
} from './url-credentials';

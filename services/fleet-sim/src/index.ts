export { type CheapFleet, type CheapFleetOptions, startCheapFleet } from './cheap-fleet';
export {
  CONFORMANCE_DEFECTS,
  defectTargetName,
  UNAVAILABLE_AFTER_BAD_INPUT_MS,
} from './defects/defects';
export { SURFACE_STAGES, type SurfaceStage } from './drift';
export type { RequestRecord } from './request-log';
export { REVISIONS, type Revision } from './revisions';
export {
  DEFECT_TARGET_NAMES,
  type DriftStep,
  type FaceDriftStep,
  HOSTILE_TARGET_NAMES,
  isDriftable,
  isFaceDriftStep,
  isSurfaceDriftStep,
  type RevisionDriftStep,
  type ScriptStep,
  type Sim,
  type SimOptions,
  type SurfaceDriftStep,
  startSim,
  TARGET_NAMES,
} from './sim';
export { STDIO_SERVER_KINDS, STDIO_SERVERS, type StdioServerKind, stdioServer } from './stdio';
export { writeStdioLauncher } from './stdio-launcher';
export type { SimTarget } from './target';
export { SIM_BEARER_TOKEN } from './targets/bearer';
export {
  CATALOGUE_PAGE_SIZE,
  CATALOGUE_PROMPT,
  CATALOGUE_RESOURCE_URI,
  CATALOGUE_TOOL_NAMES,
} from './targets/catalogue';
export {
  DUAL_ERA_CHANGED_TOOL,
  DUAL_ERA_LEGACY_ONLY_TOOL,
  DUAL_ERA_RESOURCE_URI,
} from './targets/dual-era-diff';
export {
  callerAddress,
  GEO_DEFAULT_FACE,
  GEO_FACE_REVISIONS,
  GEO_FACES,
  type GeoFace,
  isGeoFace,
} from './targets/geo';
export {
  DEEP_JSON_DEPTH,
  EMOJI_AT_PREVIEW_EDGE,
  GIB,
  GZIP_BOMB_INFLATED_BYTES,
  HUGE_ERROR_CODE,
  HUGE_ERROR_MESSAGE_CHARS,
  REDIRECT_DENIED_HOST,
  SSE_FLOOD_EVENTS_PER_SECOND,
} from './targets/hostile-http';
export { HOSTILE_SURFACE_BIG_TOOLS } from './targets/hostile-surface';
export { simCaCertificate } from './targets/hostile-tls';

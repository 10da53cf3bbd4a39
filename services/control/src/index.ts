export { type ApplySummary, applyFleet } from './apply';
export { type Control, type ControlOptions, startControl } from './control';
export { formatDuration, parseDuration } from './durations';
export { type FleetDefinition, FleetFileError, loadFleetFile, parseFleet, type ServerDefinition } from './fleet-file';
export { freshnessMs, type ScheduleEntry, Scheduler } from './scheduler';
export { detectionJobId, handshakeJobId, offsetFor, slotStart } from './slots';

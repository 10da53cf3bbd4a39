export * from './dashboard-settings';
export * from './durations';
export * from './env';
export * from './env-groups';
export * from './fleet-file';
export { type FleetProblem, problemLine } from './fleet-problems';
export * from './fleet-yaml';
export * from './probe-floor';
export * from './roles';

export * from './durations';
export * from './fleet-file';
export { type FleetProblem, problemLine } from './fleet-problems';
export * from './fleet-yaml';

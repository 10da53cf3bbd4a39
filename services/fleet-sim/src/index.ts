export { type CheapFleet, type CheapFleetOptions, startCheapFleet } from './cheap-fleet';
export type { RequestRecord } from './request-log';
export { REVISIONS, type Revision } from './revisions';
export { type DriftStep, isDriftable, type Sim, type SimOptions, startSim, TARGET_NAMES } from './sim';
export type { SimTarget } from './target';
export { SIM_BEARER_TOKEN } from './targets/bearer';

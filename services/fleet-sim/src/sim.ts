import { isIP } from 'node:net';
import { newestKnown, orderRevisions, type Revision } from '@mcp-fleet/probe';
import { DEFECT_TARGETS } from './defects/defects';
import { isSurfaceStage, type SurfaceStage } from './drift';
import type { RequestRecord } from './request-log';
import { RequestLog } from './request-log';
import { LOOPBACK } from './serve';
import type { RunningTarget, SimTarget, TargetDefinition } from './target';
import { bearer } from './targets/bearer';
import { betweenGenerations } from './targets/between-generations';
import { sseNoEndpoint, sseSlowEndpoint } from './targets/broken-sse';
import { catalogue } from './targets/catalogue';
import { catalogueLegacy } from './targets/catalogue-legacy';
import { drifterTarget } from './targets/drifter';
import { dualEraDiff } from './targets/dual-era-diff';
import { callerAddress, type GeoFace, geo, isGeoFace } from './targets/geo';
import { HOSTILE } from './targets/hostile';
import { hostileSurface } from './targets/hostile-surface';
import { legacySse } from './targets/legacy-sse';
import { modern, modernOnly } from './targets/modern';
import { sessions20250326 } from './targets/sessions-2025-03-26';
import { sessions20250618 } from './targets/sessions-2025-06-18';
import { sessions20251125 } from './targets/sessions-2025-11-25';
import { closed, silent } from './targets/sockets';
import { rateLimited, replies, unavailable, website } from './targets/status-walls';
import { surfaceDrifter } from './targets/surface-drifter';

/** The fleet in its fixed order: with a basePort, target i listens on basePort + i. */
const FLEET: readonly TargetDefinition[] = [
  legacySse,
  sessions20250326,
  sessions20250618,
  sessions20251125,
  modern,
  modernOnly,
  drifterTarget('drifter', ['2025-06-18', '2025-11-25']),
  drifterTarget('drifter-modern', ['2025-11-25', '2026-07-28']),
  drifterTarget('drifter-pinned', ['2025-03-26', '2025-06-18', '2025-11-25']),
  bearer,
  rateLimited,
  unavailable,
  website,
  silent,
  closed,
  sseNoEndpoint,
  sseSlowEndpoint,
  replies,
  // Hostile and broken servers (`hostile-…`): always last, so the targets above keep their ports.
  ...HOSTILE,
  // The conformance baselines and, in front of them, one defect per check (`defect-<check id>`):
  // after the hostile targets, so every target above keeps its port.
  catalogue,
  catalogueLegacy,
  ...DEFECT_TARGETS,
  // Surfaces (the dual-era server, a hostile one, the surface drifter): appended, so every target above keeps its port.
  dualEraDiff,
  hostileSurface,
  surfaceDrifter,
  // A server between generations (SDK 1.10: 2024-11-05 over Streamable HTTP): appended, so every target above keeps its port.
  betweenGenerations,
  // A server answering by the caller's address (issue 17: regions tested for real): appended, so every target above keeps its port.
  geo,
];

export const TARGET_NAMES: readonly string[] = FLEET.map((definition) => definition.name);
export const HOSTILE_TARGET_NAMES: readonly string[] = HOSTILE.map((definition) => definition.name);
export const DEFECT_TARGET_NAMES: readonly string[] = DEFECT_TARGETS.map((definition) => definition.name);

/** Only targets named `drifter…` change what they speak. */
export function isDriftable(name: string): boolean {
  return name.startsWith('drifter');
}

/**
 * A scheduled drift: `afterMs` after start (0: from the start), `target` starts speaking `revisions`
 * (a drifter), or serving its surface stage `surface` (a target with stages, such as surface-drifter).
 */
export type DriftStep = RevisionDriftStep | SurfaceDriftStep;

/** A step of a sim's script: a drift, or a face a target answering by the caller's address shows. */
export type ScriptStep = DriftStep | FaceDriftStep;

export interface RevisionDriftStep {
  afterMs: number;
  target: string;
  revisions: Revision[];
}

export interface SurfaceDriftStep {
  afterMs: number;
  target: string;
  surface: SurfaceStage;
}

/** A target answering by the caller's address (geo) shows `face` to `address` (omitted: to every address without one of its own). */
export interface FaceDriftStep {
  afterMs: number;
  target: string;
  face: GeoFace;
  address?: string;
}

export function isSurfaceDriftStep(step: ScriptStep): step is SurfaceDriftStep {
  return 'surface' in step;
}

export function isFaceDriftStep(step: ScriptStep): step is FaceDriftStep {
  return 'face' in step;
}

export interface SimOptions {
  /** 0 (default): ephemeral ports, so parallel tests never collide. */
  basePort?: number;
  host?: '127.0.0.1';
  /** Start only these targets (each keeps its fixed port offset). */
  only?: string[];
  script?: ScriptStep[];
  /** How many of the latest requests `requests()` remembers (default KEEP_REQUESTS, 10,000). */
  keepRequests?: number;
}

export interface Sim {
  /** Every running target in fleet order, as it is now. */
  readonly targets: SimTarget[];
  target(name: string): SimTarget;
  /** The HTTP requests the targets received (all targets, or one): the latest `keepRequests`. */
  requests(name?: string): RequestRecord[];
  /** TCP connections a target accepted. */
  connections(name: string): number;
  /** Forgets recorded requests and connection counts. */
  resetRequests(): void;
  /** Changes what a driftable target speaks, for new conversations. */
  drift(name: string, revisions: Revision[]): void;
  /** Changes the surface stage a target with stages serves, from its next request on. */
  driftSurface(name: string, stage: SurfaceStage): void;
  /**
   * Sets the face a target answering by the caller's address (geo) shows to `address` (omitted: the
   * default face), from its next request on.
   */
  face(name: string, face: GeoFace, address?: string): void;
  /** Closes every server, open stream and socket. */
  close(): Promise<void>;
}

interface Started {
  definition: TargetDefinition;
  running: RunningTarget;
}

export async function startSim(opts: SimOptions = {}): Promise<Sim> {
  const { basePort = 0, host = LOOPBACK, only, script = [] } = opts;
  if (host !== LOOPBACK) throw new Error(`fleet-sim binds ${LOOPBACK} only, not ${host}`);
  const lastPort = basePort + FLEET.length - 1;
  if (!Number.isInteger(basePort) || basePort < 0 || (basePort > 0 && lastPort > 65535)) {
    throw new Error(`basePort must be 0 or leave room for ${FLEET.length} ports below 65536: ${basePort}`);
  }
  for (const name of only ?? []) {
    if (!TARGET_NAMES.includes(name)) throw new Error(`unknown sim target: ${name}`);
  }

  const log = new RequestLog(opts.keepRequests);
  const selected = FLEET.map((definition, index) => ({ definition, index })).filter(
    ({ definition }) => only === undefined || only.includes(definition.name),
  );
  const outcomes = await Promise.allSettled(
    selected.map(async ({ definition, index }) => ({
      definition,
      running: await definition.start({
        name: definition.name,
        port: basePort === 0 ? 0 : basePort + index,
        log,
      }),
    })),
  );
  const started = new Map<string, Started>();
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') started.set(outcome.value.definition.name, outcome.value);
  }
  const failure = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failure) {
    await Promise.allSettled([...started.values()].map(({ running }) => running.close()));
    throw failure.reason;
  }

  const find = (name: string): Started => {
    const target = started.get(name);
    if (target === undefined) throw new Error(`sim target not running: ${name}`);
    return target;
  };
  const drift = (name: string, revisions: Revision[]): void => {
    const { running } = find(name);
    if (!isDriftable(name) || running.drift === undefined) throw new Error(`sim target ${name} does not drift`);
    running.drift(revisions);
  };
  const driftSurface = (name: string, stage: SurfaceStage): void => {
    const { running } = find(name);
    if (running.driftSurface === undefined) throw new Error(`sim target ${name} has no surface stages`);
    running.driftSurface(stage);
  };
  const face = (name: string, which: GeoFace, address?: string): void => {
    const { running } = find(name);
    if (running.setFace === undefined) throw new Error(`sim target ${name} does not answer by the caller's address`);
    running.setFace(which, address);
  };
  const apply = (step: ScriptStep): void => {
    if (isFaceDriftStep(step)) face(step.target, step.face, step.address);
    else if (isSurfaceDriftStep(step)) driftSurface(step.target, step.surface);
    else drift(step.target, step.revisions);
  };

  // Check the whole script up front so a bad step fails startSim, not a timer later.
  for (const step of script) {
    const { running } = find(step.target);
    if (isFaceDriftStep(step)) {
      if (running.setFace === undefined)
        throw new Error(`sim target ${step.target} does not answer by the caller's address`);
      if (!isGeoFace(step.face)) throw new Error(`drift of ${step.target} names no face`);
      if (step.address !== undefined && isIP(callerAddress(step.address)) === 0)
        throw new Error(`drift of ${step.target} sets a face for ${JSON.stringify(step.address)}, not an IP address`);
      continue;
    }
    if (isSurfaceDriftStep(step)) {
      if (running.driftSurface === undefined) throw new Error(`sim target ${step.target} has no surface stages`);
      if (!isSurfaceStage(step.surface)) throw new Error(`drift of ${step.target} names no surface stage`);
      continue;
    }
    if (!isDriftable(step.target)) throw new Error(`sim target ${step.target} does not drift`);
    if (orderRevisions(step.revisions).length === 0) throw new Error(`drift of ${step.target} lists no revision`);
  }
  // A step at 0 ms is the starting state: applied before startSim returns, so no request sees
  // what the target speaks (or serves) by default.
  for (const step of script) if (step.afterMs <= 0) apply(step);
  const timers = script
    .filter((step) => step.afterMs > 0)
    .map((step) => {
      const timer = setTimeout(() => apply(step), step.afterMs);
      timer.unref();
      return timer;
    });

  const snapshot = ({ definition, running }: Started): SimTarget => {
    const supports = running.supports();
    return {
      name: definition.name,
      url: running.url,
      description: definition.description,
      kind: definition.kind,
      supports,
      newest: newestKnown(supports) ?? null,
      surfaceStage: running.surfaceStage?.() ?? null,
      faces: running.faces?.() ?? null,
    };
  };

  let closing: Promise<void> | undefined;
  return {
    get targets() {
      return [...started.values()].map(snapshot);
    },
    target: (name) => snapshot(find(name)),
    requests: (name) => log.requests(name),
    connections: (name) => log.connections(name),
    resetRequests: () => log.reset(),
    drift,
    driftSurface,
    face,
    close() {
      closing ??= (async () => {
        for (const timer of timers) clearTimeout(timer);
        await Promise.allSettled([...started.values()].map(({ running }) => running.close()));
      })();
      return closing;
    },
  };
}

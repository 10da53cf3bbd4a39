import type { SurfaceStage } from './drift';
import type { RequestLog } from './request-log';
import type { Revision } from './revisions';
import type { GeoFace } from './targets/geo';

/** A target as tests and the demo see it. */
export interface SimTarget {
  name: string;
  url: string;
  description: string;
  kind: 'sdk' | 'odd';
  /** The revisions this target really accepts right now, oldest → newest. */
  supports: Revision[];
  newest: Revision | null;
  /** The surface stage a target with stages serves now (surface-drifter); null for the others. */
  surfaceStage: SurfaceStage | null;
  /** A target answering by the caller's address (geo): its default face and the addresses with their own; null for the others. */
  faces: { default: GeoFace; byAddress: Record<string, GeoFace> } | null;
}

export interface TargetContext {
  name: string;
  /** 0 = an ephemeral port. */
  port: number;
  log: RequestLog;
}

export interface RunningTarget {
  url: string;
  supports(): Revision[];
  close(): Promise<void>;
  /** Only driftable targets have it. */
  drift?(revisions: Revision[]): void;
  /** Only targets with surface stages have these: the stage served now, and a change of it. */
  surfaceStage?(): SurfaceStage;
  driftSurface?(stage: SurfaceStage): void;
  /** Only targets that answer by the caller's address (geo) have these: set a face (for one address, or the default), and read them. */
  setFace?(face: GeoFace, address?: string): void;
  faces?(): { default: GeoFace; byAddress: Record<string, GeoFace> };
}

export interface TargetDefinition {
  name: string;
  kind: 'sdk' | 'odd';
  description: string;
  start(ctx: TargetContext): Promise<RunningTarget>;
}

export function loopbackUrl(port: number, path: string): string {
  return `http://127.0.0.1:${port}${path}`;
}

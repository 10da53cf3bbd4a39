import type { SurfaceStage } from './drift';
import type { RequestLog } from './request-log';
import type { Revision } from './revisions';

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

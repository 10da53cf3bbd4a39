// What the API's routes are given by control: the database and the fleet as last applied.

import type { FleetDefinition } from '@mcp-fleet/config';
import type { TargetPolicy } from '@mcp-fleet/probe';
import type { Db } from '@mcp-fleet/store';
import type { ApplyOptions, ApplySummary } from '../apply';

export interface ApiContext {
  db: Db;
  /** Apply a fleet definition (as the fleet file at start or on SIGHUP), or plan it (dry run). */
  apply: (fleet: FleetDefinition, opts?: ApplyOptions) => Promise<ApplySummary>;
  regions: () => string[];
  /** The fleet's policy: what a server's URL may be. */
  policy: () => TargetPolicy;
  /** Where control's own probes may go: its floor narrowed by the fleet's policy. */
  probePolicy: () => TargetPolicy;
  /** The fleet changed: reschedule (and, for a server created or retired, tell the operator). */
  changed: (change?: { event: 'server_created' | 'server_retired'; server: string }) => void;
  metricsText: () => Promise<{ text: string | readonly (string | Uint8Array)[]; contentType: string }>;
  ready: () => boolean;
  /** Whether this control holds the scheduling lease (the health checks say it). */
  scheduling: () => boolean;
}

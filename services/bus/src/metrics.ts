// What every role's /metrics shares (control and agents): the process metrics, and the one way a
// revision becomes a label value. Here because bus is the package both roles already share for
// their runtime (as with the logger); imported as @mcp-fleet/bus/metrics so the bus itself does
// not load prom-client.
import { isRevision } from '@mcp-fleet/probe';
import { collectDefaultMetrics, type Registry } from 'prom-client';

/**
 * Gauges named like counters: `promtool check metrics` warns "non-counter metrics should not have
 * _total suffix". Each is the sum of its by-type sibling (`nodejs_active_handles{type}` …), so
 * `sum(nodejs_active_handles)` says the same. prom-client keeps them for compatibility
 * (prometheus/client_js#283, open); we drop them.
 */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** prom-client's default process and Node.js metrics, less the misnamed ones. */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
}

/**
 * A revision as a label value (`requested_version`, `negotiated_version`, `from_version`,
 * `to_version`): a known revision, `none` when there is none, `other` for anything else. A
 * negotiated revision is whatever the server answered, carried in an agent's result: bounding it
 * here keeps a hostile server or agent from minting series.
 */
export function revisionLabel(value: string | null | undefined): string {
  if (value === null || value === undefined) return 'none';
  return isRevision(value) ? value : 'other';
}

// The fleet file written from an object: demos, tests and benchmarks describe their fleet as data
// and get YAML that the fleet file's reader takes back unchanged (quoting is the yaml library's
// job, not a template's). The object's type is the reader's schema input (fleet-file.ts).
import { stringify } from 'yaml';
import type { FleetFile } from './fleet-file';

/** YAML for a fleet; `comment` (one or more lines) heads the file. */
export function fleetToYaml(fleet: FleetFile, opts: { comment?: string } = {}): string {
  const head = opts.comment ? `${opts.comment.replace(/^/gm, '# ')}\n` : '';
  return head + stringify(fleet, { lineWidth: 0 });
}

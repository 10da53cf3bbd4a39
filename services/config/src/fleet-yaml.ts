// The fleet file written from an object: demos, tests and benchmarks describe their fleet as data
// and get YAML that the fleet file's reader takes back unchanged (quoting is the yaml library's
// job, not a template's).
import { stringify } from 'yaml';

/** A test as the fleet file writes it: `newest`, or a revision it is pinned to. */
export interface FleetFileTest {
  revision: string;
}

/** One server entry of the fleet file (fields left out take the file's defaults). */
export interface FleetFileServer {
  name: string;
  url: string;
  headers?: Record<string, string>;
  regions?: string[];
  interval?: string;
  timeout?: string;
  tests?: FleetFileTest[];
  detection?: { interval: string };
}

/** The fleet file as a document (the README's "Running the monitor" section says what each field means). */
export interface FleetFile {
  regions?: string[];
  defaults?: { interval?: string; timeout?: string };
  servers: FleetFileServer[];
  policy?: { allow?: string[]; deny?: string[]; schemes?: string[] };
}

/** YAML for a fleet; `comment` (one or more lines) heads the file. */
export function fleetToYaml(fleet: FleetFile, opts: { comment?: string } = {}): string {
  const head = opts.comment ? `${opts.comment.replace(/^/gm, '# ')}\n` : '';
  return head + stringify(fleet, { lineWidth: 0 });
}

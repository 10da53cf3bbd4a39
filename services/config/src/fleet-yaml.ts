// The fleet file written from an object: demos, tests and benchmarks describe their fleet as data
// and get YAML that the fleet file's reader takes back unchanged (quoting is the yaml library's
// job, not a template's). The object's type is the reader's schema input (fleet-file.ts).
import { stringify } from 'yaml';
import { formatDuration } from './durations';
import type { FleetFile } from './fleet-file';
import { DEFAULT_JUDGEMENT, type Judgement, type JudgementEntry, judgementToEntry } from './judgement';

/** YAML for a fleet; `comment` (one or more lines) heads the file. */
export function fleetToYaml(fleet: FleetFile, opts: { comment?: string } = {}): string {
  const head = opts.comment ? `${opts.comment.replace(/^/gm, '# ')}\n` : '';
  return head + stringify(fleet, { lineWidth: 0 });
}

/**
 * A server's entry with its judgement written back as the file writes it: only the keys that differ
 * from `defaults` (the fleet's `defaults:` resolved, else DEFAULT_JUDGEMENT), so a stored server that
 * was never given a judgement writes none.
 */
export function withJudgement<E extends object>(
  entry: E,
  judgement: Judgement,
  defaults: Judgement = DEFAULT_JUDGEMENT,
): E & JudgementEntry {
  return { ...entry, ...judgementToEntry(judgement, defaults) };
}

/** Every judgement key in the file's form (durations as text): how the API shows a server's judgement. */
export function judgementFileForm(j: Judgement): Required<JudgementEntry> {
  return {
    quorum: j.quorum,
    failAfter: j.failAfter,
    confirmAfter: j.confirmAfter,
    flapWindow: formatDuration(j.flapWindowMs),
    recheck: formatDuration(j.recheckMs),
    disagreementAfter: formatDuration(j.disagreementAfterMs),
    slo: j.slo,
  };
}

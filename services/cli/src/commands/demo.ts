import { DEFECT_TARGET_NAMES, startSim } from '@mcp-fleet/fleet-sim';
import { CAUSES, detect } from '@mcp-fleet/probe';
import { parse } from '../args';
import { untilSignal } from '../signals';
import { columns } from '../table';
import { EXIT, UsageError } from '../usage';
import { formatDetection } from './detect';
import { basePort, formatTargets } from './sim';

const OPTIONS = {
  port: { type: 'string' },
  once: { type: 'boolean', default: false },
  verbose: { type: 'boolean', default: false },
} as const;

/**
 * `demo` (what `npm start` runs until the pipeline lands): start the simulated fleet, detect
 * every target, print what each speaks, and keep serving the fleet unless `--once`.
 */
export async function demoCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const sim = await startSim({ basePort: basePort(values.port) });
  try {
    out(`${formatTargets(sim)}\n`);
    const rows = [['Target', 'Detection', 'Newest supported', 'Supported revisions', 'Requests', 'ms']];
    // The conformance defect targets all detect like their SDK server: `mcp-fleet check` is their tool.
    for (const t of sim.targets.filter((target) => !DEFECT_TARGET_NAMES.includes(target.name))) {
      const d = await detect(t.url, { timeoutMs: 3_000 });
      if (values.verbose) out(formatDetection(t.url, d));
      const supported = d.revisions.filter((r) => r.supported).map((r) => r.revision);
      rows.push([
        t.name,
        // NONE alone would read "not MCP" for a server that is only down or wants a token.
        d.cause ? `${d.outcome} (${CAUSES[d.cause]})` : d.outcome,
        d.newestSupported ?? '-',
        supported.join(' ') || '-',
        String(d.requests),
        String(d.millis),
      ]);
    }
    out(`\n${columns(rows)}\n`);
    if (values.once) return EXIT.ok;
    out('Serving the simulated fleet on 127.0.0.1; try `npm run mcp-fleet -- detect <url>`. Ctrl-C stops it.');
    await untilSignal();
    return EXIT.ok;
  } finally {
    await sim.close();
  }
}

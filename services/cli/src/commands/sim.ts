import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { parse, positiveInt } from '../args';
import { demoDrift } from '../demo-fleet';
import { untilSignal } from '../signals';
import { columns } from '../table';
import { EXIT, UsageError } from '../usage';

const OPTIONS = { port: { type: 'string' }, drift: { type: 'boolean' } } as const;

/** `--port base`: target i listens on base+i; without it every target takes a free port. */
export function basePort(port: string | undefined): number {
  return port === undefined ? 0 : positiveInt(port, '--port', 0, 65_000);
}

/**
 * `sim`: start the simulated fleet on loopback, print its targets, serve until Ctrl-C. `--drift`
 * plays the demo's drift script (the compose demo runs one beside each agent, in its network).
 */
export async function simCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const sim = await startSim({ basePort: basePort(values.port), script: values.drift ? demoDrift() : [] });
  out(
    `${formatTargets(sim)}\n\nServing the simulated fleet on 127.0.0.1${values.drift ? ' with the demo drift' : ''}. Ctrl-C stops it.`,
  );
  await untilSignal();
  await sim.close();
  return EXIT.ok;
}

export function formatTargets(sim: Sim): string {
  const rows = [['Target', 'URL', 'Speaks', 'What it is']];
  for (const t of sim.targets) rows.push([t.name, t.url, t.supports.join(' ') || '-', t.description]);
  return columns(rows);
}

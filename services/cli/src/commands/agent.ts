import { startAgent, startTracing } from '@mcp-fleet/agent';
import { busOptionsFromEnv, createLogger, openBus } from '@mcp-fleet/bus';
import { describeRanges } from '@mcp-fleet/probe';
import { parse, positiveInt, secretEnv } from '../args';
import { probeFloor } from '../probe-floor';
import { EXIT, UsageError } from '../usage';
import { untilSignal } from './sim';

const OPTIONS = {
  region: { type: 'string' },
  concurrency: { type: 'string' },
  'metrics-port': { type: 'string' },
  host: { type: 'string' },
  'ack-wait': { type: 'string' },
  allow: { type: 'string' },
  deny: { type: 'string' },
  schemes: { type: 'string' },
} as const;

/** `agent --region <name>`: a regional probe agent on its own, pulling jobs from NATS. */
export async function agentCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  const region = values.region ?? process.env.MCP_FLEET_REGION;
  if (!region) throw new UsageError('agent needs --region <name> (or MCP_FLEET_REGION)');
  // Where this agent's probes may go, whatever a job says: a job can narrow it, never widen it.
  const floor = probeFloor(process.env, { allow: values.allow, deny: values.deny, schemes: values.schemes });
  // NATS_PASSWORD may come from a file (NATS_PASSWORD_FILE: a mounted secret).
  const busOptions = busOptionsFromEnv(secretEnv());
  if (!busOptions.natsUrl)
    throw new UsageError(
      'a separate agent reaches control through NATS: set NATS_URL (mcp-fleet up runs agents in-process)',
    );
  const log = createLogger(`mcp-fleet-agent-${region}`);
  // Streams and durables are control's: an agent's NATS user may only pull its region's jobs and
  // publish its region's results and heartbeats (deploy/nats), so it waits for them to exist.
  const bus = await openBus({ ...busOptions, log, declare: false });
  const tracing = startTracing({ serviceName: 'mcp-fleet-agent' });
  const agent = await startAgent({
    bus,
    region,
    log,
    concurrency: positiveInt(values.concurrency, '--concurrency', 64, 1024),
    metricsPort: positiveInt(
      values['metrics-port'] ?? process.env.MCP_FLEET_AGENT_PORT,
      '--metrics-port',
      9464,
      65_535,
    ),
    host: values.host ?? process.env.MCP_FLEET_AGENT_HOST ?? '127.0.0.1',
    // How long a job may go unsettled before NATS hands it to another agent (a killed agent's jobs).
    ackWaitMs: positiveInt(values['ack-wait'], '--ack-wait', 60_000, 3_600_000),
    floor,
  });
  out(
    `agent ${agent.id} in region ${region}; metrics at ${agent.metricsUrl}; probe floor: ${describeRanges(floor)}. SIGTERM or Ctrl-C stops it.`,
  );
  await untilSignal();
  await agent.stop();
  await tracing.shutdown();
  await bus.close();
  return EXIT.ok;
}

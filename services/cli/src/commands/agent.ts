import { startAgent, startTracing } from '@mcp-fleet/agent';
import { openBus } from '@mcp-fleet/bus';
// Config's parts an agent needs, not its index: that loads the fleet file's YAML parser too.
import { parseEnv } from '@mcp-fleet/config/env';
import { agentEnv } from '@mcp-fleet/config/roles';
import { configureLogs, createLogger } from '@mcp-fleet/log';
import { describeRanges } from '@mcp-fleet/probe';
import { parse, positiveInt } from '../args';
import { assertFree, inUse, type Listener } from '../in-use';
import { probeFloor } from '../probe-floor';
import { untilSignal } from '../signals';
import { sourceAddressFlag } from '../source-address';
import { stdioAgentOptions } from '../stdio-agents';
import { EXIT, UsageError } from '../usage';

const OPTIONS = {
  region: { type: 'string' },
  concurrency: { type: 'string' },
  'metrics-port': { type: 'string' },
  host: { type: 'string' },
  'ack-wait': { type: 'string' },
  allow: { type: 'string' },
  deny: { type: 'string' },
  schemes: { type: 'string' },
  'source-address': { type: 'string' },
  'stdio-commands': { type: 'string' },
  'stdio-root': { type: 'string' },
  'stdio-concurrency': { type: 'string' },
} as const;

/** `agent --region <name>`: a regional probe agent on its own, pulling jobs from NATS. */
export async function agentCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parse(args, OPTIONS);
  if (positionals.length) throw new UsageError(`unexpected argument: ${positionals[0]}`);
  // The environment, parsed once (NATS_PASSWORD may come from a file: NATS_PASSWORD_FILE, a mounted secret).
  const settings = parseEnv(agentEnv, process.env);
  configureLogs(settings.log);
  const region = values.region ?? settings.region;
  if (!region) throw new UsageError('agent needs --region <name> (or MCP_FLEET_REGION)');
  // Where this agent's probes may go, whatever a job says: a job can narrow it, never widen it.
  const floor = probeFloor(settings.probeFloor, { allow: values.allow, deny: values.deny, schemes: values.schemes });
  // Where its probes connect from (a multi-homed host): the flag wins over MCP_FLEET_SOURCE_ADDRESS.
  const sourceAddress = sourceAddressFlag(values['source-address'] ?? settings.sourceAddress);
  // stdio servers: only the programs this agent's own allowlist names (default none); each flag wins over its variable.
  const stdio = stdioAgentOptions(settings.stdio, values);
  const busOptions = settings.nats;
  if (!busOptions.natsUrl)
    throw new UsageError(
      'a separate agent reaches control through NATS: set NATS_URL (mcp-fleet up runs agents in-process)',
    );
  // 'auto' (the default): sized from the agent's rate × job time; a number fixes it.
  const concurrency =
    values.concurrency === undefined || values.concurrency === 'auto'
      ? 'auto'
      : positiveInt(values.concurrency, '--concurrency', 64, 1024);
  // How long a job may go unsettled before NATS hands it to another agent (a killed agent's jobs).
  const ackWaitMs = positiveInt(values['ack-wait'], '--ack-wait', 60_000, 3_600_000);
  const metricsPort =
    values['metrics-port'] === undefined
      ? settings.metrics.port
      : positiveInt(values['metrics-port'], '--metrics-port', 9464, 65_535);
  const host = values.host ?? settings.metrics.host ?? '127.0.0.1';
  const listeners: Listener[] = [
    {
      what: `agent ${region}'s /metrics`,
      host,
      port: metricsPort,
      setting: '--metrics-port or MCP_FLEET_AGENT_PORT',
      hostSetting: '--host or MCP_FLEET_AGENT_HOST',
    },
  ];
  try {
    // Before NATS is dialled: a port in use is said with what to set, not found after connecting.
    await assertFree({ listeners });
  } catch (err) {
    const taken = inUse(err, listeners);
    if (!taken) throw err;
    process.stderr.write(`mcp-fleet: ${taken.message}\n`);
    return EXIT.usage;
  }
  const log = createLogger(`mcp-fleet-agent-${region}`);
  // Streams and durables are control's: an agent's NATS user may only pull its region's jobs and
  // publish its region's results and heartbeats (deploy/nats), so it waits for them to exist.
  const bus = await openBus({ ...busOptions, log, declare: false });
  const tracing = await startTracing({ serviceName: 'mcp-fleet-agent', url: settings.tracing.url });
  let agent: Awaited<ReturnType<typeof startAgent>>;
  try {
    agent = await startAgent({
      bus,
      region,
      log,
      concurrency,
      metricsPort,
      host,
      ackWaitMs,
      probeFloor: floor,
      ...(sourceAddress ? { sourceAddress } : {}),
      ...stdio,
    });
  } catch (err) {
    const taken = inUse(err, listeners);
    if (!taken) throw err;
    await tracing.shutdown();
    await bus.close();
    process.stderr.write(`mcp-fleet: ${taken.message}\n`);
    return EXIT.usage;
  }
  out(
    `agent ${agent.id} in region ${region}; metrics at ${agent.metricsUrl}; probe floor: ${describeRanges(floor)}${sourceAddress ? `; probes from ${sourceAddress}` : ''}. SIGTERM or Ctrl-C stops it.`,
  );
  await untilSignal();
  await agent.stop();
  await tracing.shutdown();
  await bus.close();
  return EXIT.ok;
}

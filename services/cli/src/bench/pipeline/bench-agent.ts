// The bench's agent, in the pass's process (BENCH_AGENT_PROCS=0) or in one of its own: a NATS
// connection of its own, as an agent elsewhere would have, and a count of the jobs it was handed.
import { appendFileSync } from 'node:fs';
import { type Agent, startAgent } from '@mcp-fleet/agent';
import { type Bus, connectNatsBus, type NatsBus } from '@mcp-fleet/bus';
import { benchLogger, LOOPBACK_FLOOR, NATS_URL, REGION } from './settings';

export type DeliveryStats = { deliveries: number; repeats: number; redelivered: number };

export interface BenchAgent {
  agent: Agent;
  stats(): DeliveryStats;
  /** Stop the agent, then close its connection. */
  stop(): Promise<void>;
}

export async function startBenchAgent(namespace: string, concurrency: number | undefined): Promise<BenchAgent> {
  const log = benchLogger('agent');
  const bus: NatsBus = await connectNatsBus({ servers: NATS_URL, namespace, name: 'bench-agent', log });
  const seen = countDeliveries();
  try {
    const agent = await startAgent({
      bus: seen.wrap(bus),
      region: REGION,
      id: `bench-agent-${process.pid}`,
      ...(concurrency ? { concurrency } : {}),
      metricsPort: null,
      processMetrics: false,
      stopGraceMs: 5_000,
      log,
      probeFloor: LOOPBACK_FLOOR,
    });
    const trace = traceAgent(agent, process.env.BENCH_TRACE_AGENT);
    return {
      agent,
      stats: seen.stats,
      stop: () => {
        clearInterval(trace);
        return agent.stop().finally(() => bus.close());
      },
    };
  } catch (err) {
    await bus.close();
    throw err;
  }
}

/**
 * BENCH_TRACE_AGENT=<file>: every 250 ms a line `ms since the epoch,limit,in flight` — how the
 * agent's 'auto' concurrency follows the ticks (what showed it sitting at its limit).
 */
function traceAgent(agent: Agent, file: string | undefined): NodeJS.Timeout | undefined {
  if (!file) return undefined;
  return setInterval(async () => {
    const limit = (await agent.registry.getSingleMetric('mcp_agent_concurrency_limit')?.get())?.values[0]?.value;
    appendFileSync(file, `${Date.now()},${limit ?? ''},${agent.inFlight()}\n`);
  }, 250);
}

/** Jobs an agent was handed more than once (a redelivery or a double publish) show up here. */
function countDeliveries() {
  const seen = new Set<string>();
  let deliveries = 0;
  let repeats = 0;
  let redelivered = 0;
  return {
    stats: (): DeliveryStats => ({ deliveries, repeats, redelivered }),
    wrap: (bus: Bus): Bus => ({
      ...bus,
      consumeJobs: (region, handler, opts) =>
        bus.consumeJobs(
          region,
          (d) => {
            deliveries += 1;
            if (d.redeliveries > 0) redelivered += 1;
            if (seen.has(d.value.jobId)) repeats += 1;
            else seen.add(d.value.jobId);
            return handler(d);
          },
          opts,
        ),
    }),
  };
}

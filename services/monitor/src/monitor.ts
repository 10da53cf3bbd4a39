// The whole monitor, started one way: `mcp-fleet up`, the test harness, the deploy tests' live
// monitor, bench:pipeline and the screenshots all wire store, bus, control, agents and the
// dashboard through here. The config is a typed object: reading the environment is the caller's
// job (the CLI's edge), so nothing here knows a variable name.
import { type Agent, type AgentOptions, startAgent } from '@mcp-fleet/agent';
import { type Bus, type OpenBusOptions, openBus } from '@mcp-fleet/bus';
import type { DashboardSettings } from '@mcp-fleet/config';
import { type Control, type ControlOptions, startControl } from '@mcp-fleet/control';
import type { Logger } from '@mcp-fleet/log';
import { type Db, openStore, type Store, type StoreOptions } from '@mcp-fleet/store';

/** One agent per region, all alike but for the region and the /metrics port. */
export interface AgentsConfig extends Omit<AgentOptions, 'bus' | 'region' | 'metricsPort' | 'log'> {
  /** Default: the regions of control's fleet (else control's `regions`). */
  regions?: readonly string[];
  /**
   * The first agent's /metrics port, each next region's one more; 0 = any free port for each
   * (default), null = no HTTP server.
   */
  metricsPort?: number | null;
  /** Default: the monitor's logger. */
  log?: Logger;
  /** The agents' own bus (default the monitor's): an agent elsewhere has a connection of its own. */
  bus?: Bus;
  /**
   * A region's agent's own source address (over `sourceAddress`): two regions on one machine as two
   * callers, e.g. `{ 'eu-west': '127.0.0.1', 'us-east': '127.0.0.2' }` against fleet-sim's geo target.
   */
  sourceAddresses?: Readonly<Record<string, string>>;
}

/** The dashboard as this package needs it: @mcp-fleet/web's startDashboard has this shape. */
export interface DashboardStarter {
  startDashboard(
    opts: DashboardSettings & { db: Db; apiUrl: string },
  ): Promise<{ url: string; close(): Promise<void> }>;
}

export interface DashboardConfig extends DashboardSettings {
  /**
   * Loads @mcp-fleet/web (a dynamic import of it), called only when a dashboard starts: Next.js
   * takes seconds to import. The caller imports it, not this package: the dashboard's tests start
   * monitors through this package, so depending on the dashboard would make a cycle.
   */
  load: () => Promise<DashboardStarter>;
}

export interface MonitorConfig {
  log: Logger;
  /**
   * An opened store (the caller migrates and closes it), or how to open one: then the monitor
   * opens it, applies the migrations and closes it at stop.
   */
  store: Store | { open: StoreOptions };
  /**
   * An opened bus (the caller closes it), or how to open one (NATS when `natsUrl` is set, else the
   * in-process queue): then the monitor closes it at stop. Default: the in-process queue.
   */
  bus?: Bus | { open: OpenBusOptions };
  /** startControl's options; `log` defaults to the monitor's. */
  control: Omit<ControlOptions, 'store' | 'bus' | 'log'> & { log?: Logger };
  /** Default: one agent per region with the agent's defaults; false = none. */
  agents?: AgentsConfig | false;
  /** Unset = no dashboard. */
  dashboard?: DashboardConfig;
}

export interface MonitorAddresses {
  /** Control's base URL (the API is under /api, its metrics at /metrics). */
  api: string;
  dashboard: string | null;
  /** Each agent's /metrics URL (null without an HTTP server), in region order. */
  agents: { region: string; metrics: string | null }[];
}

export interface Monitor {
  store: Store;
  bus: Bus;
  /** The control plane running now (a new one after restartControl). */
  readonly control: Control;
  agents: Agent[];
  dashboard: { url: string; close(): Promise<void> } | undefined;
  readonly addresses: MonitorAddresses;
  /** Stop control and start another over the same store and bus, as a restarted process would. */
  restartControl(): Promise<void>;
  /** Dashboard, agents, control, then the bus and store if the monitor opened them; every step runs. */
  stop(): Promise<void>;
}

const isStore = (s: MonitorConfig['store']): s is Store => !('open' in s);
const isBus = (b: NonNullable<MonitorConfig['bus']>): b is Bus => !('open' in b);

export async function startMonitor(config: MonitorConfig): Promise<Monitor> {
  const { log } = config;
  // What is running, in start order; stop undoes it in reverse. Given store and bus are not ours to close.
  const undo: { what: string; stop: () => Promise<unknown> }[] = [];
  const stopAll = async () => {
    let first: unknown;
    for (const step of undo.splice(0).reverse()) {
      try {
        await step.stop();
      } catch (err) {
        log.warn({ err: (err as Error).message }, `monitor: could not stop ${step.what}`);
        first ??= err;
      }
    }
    if (first) throw first;
  };
  try {
    let store: Store;
    if (isStore(config.store)) store = config.store;
    else {
      const opened = await openStore(config.store.open);
      undo.push({ what: 'the store', stop: () => opened.close() });
      await opened.migrate();
      store = opened;
    }
    let bus: Bus;
    const busConfig = config.bus ?? { open: { log } };
    if (isBus(busConfig)) bus = busConfig;
    else {
      const opened = await openBus({ log, ...busConfig.open });
      undo.push({ what: 'the bus', stop: () => opened.close() });
      bus = opened;
    }

    const { log: controlLog, ...controlOptions } = config.control;
    const agentRegions =
      config.agents === false
        ? []
        : (config.agents?.regions ?? config.control.fleet?.regions ?? config.control.regions ?? []);
    // The agents below start after control applies the fleet: it counts what they will allow.
    const stdioCommands = config.agents === false ? [] : (config.agents?.stdioCommands ?? []);
    const agentsStarting = stdioCommands.length
      ? Object.fromEntries(agentRegions.map((r) => [r, stdioCommands]))
      : undefined;
    const start = () =>
      startControl({
        ...controlOptions,
        ...(agentsStarting ? { agentsStarting } : {}),
        store,
        bus,
        log: controlLog ?? log,
      });
    let control = await start();
    undo.push({ what: 'control', stop: () => control.stop() });

    const agents: Agent[] = [];
    if (config.agents !== false) {
      const {
        regions: only,
        metricsPort = 0,
        log: agentLog,
        bus: agentBus,
        sourceAddresses = {},
        ...agentOptions
      } = config.agents ?? {};
      const regions = only ?? agentRegions;
      undo.push({ what: 'the agents', stop: () => Promise.allSettled(agents.map((a) => a.stop())) });
      for (const [i, region] of regions.entries())
        agents.push(
          await startAgent({
            ...agentOptions,
            bus: agentBus ?? bus,
            region,
            ...(Object.hasOwn(sourceAddresses, region) ? { sourceAddress: sourceAddresses[region] } : {}),
            metricsPort: metricsPort === null || metricsPort === 0 ? metricsPort : metricsPort + i,
            log: agentLog ?? log,
          }),
        );
    }

    let dashboard: Monitor['dashboard'];
    if (config.dashboard) {
      const { load, ...opts } = config.dashboard;
      const { startDashboard } = await load();
      dashboard = await startDashboard({ ...opts, db: store.db, apiUrl: control.url });
      undo.push({ what: 'the dashboard', stop: () => dashboard!.close() });
    }

    let stopping: Promise<void> | undefined;
    return {
      store,
      bus,
      get control() {
        return control;
      },
      agents,
      dashboard,
      get addresses() {
        return {
          api: control.url,
          dashboard: dashboard?.url ?? null,
          agents: agents.map((a) => ({ region: a.region, metrics: a.metricsUrl })),
        };
      },
      async restartControl() {
        await control.stop();
        control = await start();
      },
      stop() {
        stopping ??= stopAll();
        return stopping;
      },
    };
  } catch (err) {
    // Whatever started is stopped; the caller sees the error that stopped the start.
    await stopAll().catch(() => undefined);
    throw err;
  }
}

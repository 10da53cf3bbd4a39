// Real processes for the fault tests: the mcp-fleet CLI's agent and control, each a child whose
// JSON log lines the test can read, and that it can SIGTERM or SIGKILL. Every child is tracked so
// a failing test still leaves nothing running behind (killed by its own pid, never by name).
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort, waitFor } from '@mcp-fleet/testkit';

export const CLI = fileURLToPath(new URL('../../../cli/bin/mcp-fleet.js', import.meta.url));

/** One line a child wrote: the text, and its JSON when it is a pino line. */
export interface LogLine {
  at: number;
  stream: 'stdout' | 'stderr';
  text: string;
  json: Record<string, unknown> | undefined;
}

export interface Child {
  readonly name: string;
  readonly process: ChildProcess;
  readonly pid: number;
  readonly lines: LogLine[];
  /** Lines whose pino `msg` is exactly this. */
  messages(msg: string): LogLine[];
  /** Wait for a line that matches (already written or still to come). */
  waitForLine(what: string, match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Resolves with the exit code or signal once the process is gone. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Send the signal and wait for the exit. */
  kill(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
}

const running = new Set<Child>();

/** Kill every child still running (SIGKILL, by pid): for afterAll, whatever happened. */
export async function killAll(): Promise<void> {
  await Promise.all([...running].map((child) => child.kill('SIGKILL')));
}

process.once('exit', () => {
  for (const child of running) child.process.kill('SIGKILL');
});

export function spawnChild(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): Child {
  const proc = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (proc.pid === undefined) throw new Error(`${name} did not start`);
  const lines: LogLine[] = [];
  const listeners = new Set<(line: LogLine) => void>();
  const read = (stream: 'stdout' | 'stderr') => {
    const source = stream === 'stdout' ? proc.stdout : proc.stderr;
    if (!source) return;
    createInterface({ input: source }).on('line', (text) => {
      let json: Record<string, unknown> | undefined;
      if (text.startsWith('{')) {
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          json = undefined;
        }
      }
      const line = { at: Date.now(), stream, text, json };
      lines.push(line);
      for (const listener of listeners) listener(line);
    });
  };
  read('stdout');
  read('stderr');
  let exitState: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      exitState = { code, signal };
      resolve(exitState);
    });
  });
  const child: Child = {
    name,
    process: proc,
    pid: proc.pid,
    lines,
    messages: (msg) => lines.filter((l) => l.json?.msg === msg),
    waitForLine(what, match, timeoutMs = 30_000) {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise<LogLine>((resolve, reject) => {
        const done = (fn: () => void) => {
          clearTimeout(timer);
          listeners.delete(listener);
          fn();
        };
        const listener = (line: LogLine) => {
          if (match(line)) done(() => resolve(line));
        };
        const timer = setTimeout(
          () => done(() => reject(new Error(`timed out waiting for ${name}: ${what}\n${tail(lines)}`))),
          timeoutMs,
        );
        listeners.add(listener);
        void exited.then((state) => {
          if (listeners.has(listener))
            done(() =>
              reject(new Error(`${name} exited (${state.code ?? state.signal}) before ${what}\n${tail(lines)}`)),
            );
        });
      });
    },
    exited,
    async kill(signal) {
      if (exitState) return exitState;
      proc.kill(signal);
      return exited;
    },
    alive: () => exitState === undefined,
  };
  running.add(child);
  void exited.then(() => running.delete(child));
  return child;
}

function tail(lines: LogLine[]): string {
  return lines
    .slice(-15)
    .map((l) => `  ${l.stream}: ${l.text.slice(0, 400)}`)
    .join('\n');
}

export interface AgentProcess extends Child {
  /** The agent's id as it reports runs: `<hostname>-<pid>-<region>`. */
  readonly id: string;
  readonly region: string;
  readonly metricsUrl: string;
}

/** `mcp-fleet agent --region <region>` against NATS, started and ready to pull. */
export async function startAgentProcess(opts: {
  region: string;
  natsUrl: string;
  namespace: string;
  ackWaitMs: number;
  concurrency?: number;
}): Promise<AgentProcess> {
  const port = await freePort();
  const args = [CLI, 'agent', '--region', opts.region, '--metrics-port', String(port)];
  args.push('--ack-wait', String(opts.ackWaitMs), '--concurrency', String(opts.concurrency ?? 64));
  const child = spawnChild(`agent ${opts.region}`, process.execPath, args, {
    ...process.env,
    NATS_URL: opts.natsUrl,
    MCP_FLEET_NATS_NAMESPACE: opts.namespace,
    // The targets listen on loopback; an agent's floor is public addresses only unless told.
    MCP_FLEET_PROBE_ALLOW: '127.0.0.0/8',
    LOG_LEVEL: 'info',
    OTEL_EXPORTER_OTLP_ENDPOINT: '',
  });
  const started = await child.waitForLine('agent started', (l) => l.json?.msg === 'agent started');
  return Object.assign(child, {
    id: String(started.json?.agent),
    region: opts.region,
    metricsUrl: `http://127.0.0.1:${port}/metrics`,
  });
}

export interface ControlProcess extends Child {
  readonly url: string;
}

/** `mcp-fleet control --fleet <file>` with its own database, NATS and API port, serving. */
export async function startControlProcess(opts: {
  fleetFile: string;
  databaseUrl: string;
  natsUrl: string;
  namespace: string;
  port?: number;
}): Promise<ControlProcess> {
  const port = opts.port ?? (await freePort());
  const child = spawnChild('control', process.execPath, [CLI, 'control', '--fleet', opts.fleetFile], {
    ...process.env,
    DATABASE_URL: opts.databaseUrl,
    NATS_URL: opts.natsUrl,
    MCP_FLEET_NATS_NAMESPACE: opts.namespace,
    MCP_FLEET_API_PORT: String(port),
    MCP_FLEET_PROBE_ALLOW: '127.0.0.0/8',
    LOG_LEVEL: 'info',
  });
  await child.waitForLine('control to serve', (l) => l.text.startsWith('control at '));
  return Object.assign(child, { url: `http://127.0.0.1:${port}` });
}

/** Poll a condition at a gentler pace than waitFor's 20 ms, for queries over whole tables. */
export function poll<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs: number,
  everyMs = 100,
): Promise<T> {
  return waitFor(
    what,
    async () => {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
      await new Promise((r) => setTimeout(r, everyMs));
      return undefined;
    },
    timeoutMs,
  );
}

// One stdio server process, started and ended by the probe. The only place a probe spawns
// anything, so the one place that owns the limits: the environment is exactly the spec's (never
// the prober's own), the working directory is the spec's or a fresh empty one, the process lives in
// a process group of its own (so a wrapper's children end with it), its lifetime is bounded, and
// what it writes is bounded: stdout lines and stdout bytes are capped (a flood is killed), stderr
// keeps only its last bytes.
//
// Trust boundary: everything the process writes is hostile input. Lines are framed by lines.ts
// under a cap, parsed by jsonrpc.ts (which keeps only the first levels of what it parses), and a
// line that is not a JSON-RPC message is a finding (stdout carries protocol messages only), never
// an answer.
//
// Shutdown follows the MCP stdio transport: close stdin and wait, then SIGTERM and wait, then
// SIGKILL; every wait is bounded, and the process is always reaped (its exit is awaited).
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type JsonRpcMessage, parseJsonRpc } from '../jsonrpc';
import type { CommandSpec } from './command';
import { LineReader } from './lines';

export interface StdioLimits {
  /** The longest one process may live; it is SIGKILLed past it. */
  lifetimeMs: number;
  /** The longest line (one message) read from stdout; the rest of a longer one is dropped unread. */
  maxLineBytes: number;
  /** Everything one process may write to stdout; past it the process is SIGKILLed (a flood). */
  maxStdoutBytes: number;
  /** How much of stderr is kept (its last bytes: a crash explains itself at the end). */
  maxStderrBytes: number;
  /** How long a process may take to exit after its stdin is closed, before SIGTERM. */
  stdinCloseWaitMs: number;
  /** How long after SIGTERM before SIGKILL. */
  sigtermWaitMs: number;
}

export const STDIO_LIMITS: StdioLimits = {
  lifetimeMs: 60_000,
  maxLineBytes: 256 * 1024,
  maxStdoutBytes: 4 * 1024 * 1024,
  maxStderrBytes: 8 * 1024,
  stdinCloseWaitMs: 2_000,
  sigtermWaitMs: 2_000,
};

/** How long SIGKILL may take to be reaped before the probe stops waiting (it cannot be ignored). */
const SIGKILL_WAIT_MS = 5_000;
/** How many non-protocol stdout lines are kept as samples (all are counted). */
const NOT_JSON_SAMPLES = 3;
const SAMPLE_CHARS = 200;

/** Why a request over the pipe got no answer. */
export type PipeFailure = 'spawn_failed' | 'exited_early' | 'timeout' | 'stdout_flood';

export interface PipeAnswer {
  message: JsonRpcMessage | undefined;
  /** The answer's line (at most maxLineBytes). */
  text: string;
  failure: PipeFailure | null;
  error: string | undefined;
}

/** How the process ended: on its own before the probe closed it, or at which step of the shutdown. */
export type EndedBy = 'itself' | 'stdin_close' | 'sigterm' | 'sigkill';

export interface Ending {
  by: EndedBy;
  code: number | null;
  signal: string | null;
}

interface Waiter {
  id: number | string | null;
  /** Also take an error answered with id null (a parse error cannot name the request's id). */
  orNull: boolean;
  resolve: (answer: PipeAnswer) => void;
  timer: NodeJS.Timeout;
}

export class ChildServer {
  /** Lines on stdout that were not JSON-RPC messages: all counted, the first few kept. */
  readonly notJson = { count: 0, samples: [] as string[] };
  readonly startedAt = Date.now();
  readonly #limits: StdioLimits;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #ownCwd: string | undefined;
  readonly #stdout: LineReader;
  readonly #waiters = new Set<Waiter>();
  readonly #exited: Promise<void>;
  #stderr = Buffer.alloc(0);
  #failure: { failure: PipeFailure; error: string } | undefined;
  #exit: { code: number | null; signal: string | null } | undefined;
  #closing = false;
  #ending: Promise<Ending> | undefined;
  #lifetime: NodeJS.Timeout;

  static async start(spec: CommandSpec, limits: StdioLimits = STDIO_LIMITS): Promise<ChildServer> {
    const ownCwd = spec.cwd === undefined ? await mkdtemp(join(tmpdir(), 'mcp-fleet-stdio-')) : undefined;
    return new ChildServer(spec, limits, ownCwd);
  }

  private constructor(spec: CommandSpec, limits: StdioLimits, ownCwd: string | undefined) {
    this.#limits = limits;
    this.#ownCwd = ownCwd;
    this.#stdout = new LineReader(limits.maxLineBytes);
    this.#child = spawn(spec.command, [...spec.args], {
      // The whole environment, as given: nothing of the prober's (its credentials, its PATH) leaks in.
      env: { ...spec.env } as NodeJS.ProcessEnv,
      cwd: spec.cwd ?? ownCwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      // A group of its own: signals reach a wrapper's children too (npx, sh -c…).
      detached: true,
      shell: false,
      windowsHide: true,
    });
    this.#exited = new Promise((resolve) => {
      this.#child.once('exit', (code, signal) => {
        this.#exit = { code, signal };
        resolve();
      });
      this.#child.once('error', (err) => {
        // Spawning failed (no such program, not executable, no such cwd): there is no process to wait for.
        if (this.#child.pid === undefined) {
          this.#fail(
            'spawn_failed',
            `the command could not be started (${(err as NodeJS.ErrnoException).code ?? err.message})`,
          );
          this.#exit = { code: null, signal: null };
          resolve();
        }
      });
    });
    // A process that exits without answering: what is waiting gets "exited early" once its output is read.
    this.#child.once('close', () => {
      if (!this.#closing) this.#fail('exited_early', `the process exited before answering (${this.#exitWords()})`);
    });
    this.#child.stdin.on('error', () => {
      // EPIPE: the process stopped reading; its exit (or the request's timeout) says so.
    });
    this.#child.stdout.on('data', (chunk: Buffer) => this.#onStdout(chunk));
    this.#child.stderr.on('data', (chunk: Buffer) => this.#onStderr(chunk));
    this.#lifetime = setTimeout(() => {
      this.#fail('timeout', `the process outlived its ${limits.lifetimeMs} ms and was killed`);
      this.#signal('SIGKILL');
    }, limits.lifetimeMs);
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Stdout bytes the process wrote. */
  get stdoutBytes(): number {
    return this.#stdout.total;
  }

  /** The last bytes of stderr (at most maxStderrBytes), as text. */
  stderr(): string {
    return this.#stderr.toString('utf8');
  }

  /** Write one line (a JSON-RPC message, or deliberately not one) to stdin. */
  write(body: string): void {
    if (this.#failure || this.#closing || !this.#child.stdin.writable) return;
    // A body is one line: a newline inside it would split the message in two.
    this.#child.stdin.write(`${body.replace(/\r?\n/g, ' ')}\n`);
  }

  /** Write a request and wait for its answer: the response with `id` (or an error with id null, when `orNull`). */
  request(body: string, id: number | string | null, timeoutMs: number, orNull = false): Promise<PipeAnswer> {
    if (this.#failure) return Promise.resolve(failedAnswer(this.#failure));
    return new Promise((resolve) => {
      const waiter: Waiter = {
        id,
        orNull,
        resolve: (answer) => {
          clearTimeout(waiter.timer);
          this.#waiters.delete(waiter);
          resolve(answer);
        },
        timer: setTimeout(
          () =>
            waiter.resolve(failedAnswer({ failure: 'timeout', error: `no answer on stdout within ${timeoutMs} ms` })),
          Math.max(1, timeoutMs),
        ),
      };
      this.#waiters.add(waiter);
      this.write(body);
    });
  }

  /** The process ended on its own (or was killed for a limit) before the probe closed it. */
  get ended(): boolean {
    return this.#exit !== undefined;
  }

  /**
   * Shut the process down as the MCP stdio transport says: close stdin and wait, SIGTERM and wait,
   * SIGKILL. Resolves once it has exited (and its group is swept), with the step that ended it.
   */
  close(): Promise<Ending> {
    this.#ending ??= this.#shutdown();
    return this.#ending;
  }

  async #shutdown(): Promise<Ending> {
    const before = this.#exit !== undefined;
    this.#closing = true;
    let by: EndedBy = 'itself';
    if (!before) {
      this.#child.stdin.end();
      by = 'stdin_close';
      if (!(await this.#waitExit(this.#limits.stdinCloseWaitMs))) {
        by = 'sigterm';
        this.#signal('SIGTERM');
        if (!(await this.#waitExit(this.#limits.sigtermWaitMs))) {
          by = 'sigkill';
          this.#signal('SIGKILL');
          await this.#waitExit(SIGKILL_WAIT_MS);
        }
      }
    }
    // The lifetime limit may have SIGKILLed it during a wait: name the signal that ended it.
    if (this.#exit?.signal === 'SIGKILL' && by !== 'itself') by = 'sigkill';
    clearTimeout(this.#lifetime);
    // Whatever the leader left behind in its group goes too; the pipes are closed even if a straggler holds them.
    this.#signal('SIGKILL');
    this.#child.stdout.destroy();
    this.#child.stderr.destroy();
    this.#child.stdin.destroy();
    this.#settleAll({ failure: 'exited_early', error: 'the process was shut down before answering' });
    if (this.#ownCwd) await rm(this.#ownCwd, { recursive: true, force: true }).catch(() => {});
    return { by, code: this.#exit?.code ?? null, signal: this.#exit?.signal ?? null };
  }

  async #waitExit(ms: number): Promise<boolean> {
    if (this.#exit) return true;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    const exited = await Promise.race([this.#exited.then(() => true as const), timedOut]);
    clearTimeout(timer);
    return exited;
  }

  #signal(signal: NodeJS.Signals): void {
    const pid = this.#child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // ESRCH: the group is gone already.
    }
  }

  #onStdout(chunk: Buffer): void {
    if (this.#failure?.failure === 'stdout_flood') return;
    for (const line of this.#stdout.push(chunk)) this.#onLine(line.text, line.cut);
    if (this.#stdout.total > this.#limits.maxStdoutBytes) {
      this.#fail(
        'stdout_flood',
        `the process wrote more than ${this.#limits.maxStdoutBytes} bytes to stdout and was killed`,
      );
      this.#signal('SIGKILL');
      this.#child.stdout.destroy();
    }
  }

  #onLine(text: string, cut: boolean): void {
    if (text.trim() === '') return;
    const message = cut ? undefined : parseJsonRpc(text);
    if (!message) {
      this.notJson.count += 1;
      if (this.notJson.samples.length < NOT_JSON_SAMPLES) this.notJson.samples.push(text.slice(0, SAMPLE_CHARS));
      return;
    }
    if (!('result' in message || 'error' in message)) return; // a request or notification from the server: not an answer
    for (const w of this.#waiters) {
      if (message.id === w.id || (w.orNull && message.id === null && 'error' in message)) {
        w.resolve({ message, text, failure: null, error: undefined });
        return;
      }
    }
  }

  #onStderr(chunk: Buffer): void {
    const max = this.#limits.maxStderrBytes;
    const joined = this.#stderr.byteLength + chunk.byteLength <= max ? Buffer.concat([this.#stderr, chunk]) : undefined;
    this.#stderr =
      joined ?? Buffer.concat([this.#stderr, chunk.subarray(Math.max(0, chunk.byteLength - max))]).subarray(-max);
  }

  #fail(failure: PipeFailure, error: string): void {
    this.#failure ??= { failure, error };
    this.#settleAll(this.#failure);
  }

  #settleAll(f: { failure: PipeFailure; error: string }): void {
    for (const w of [...this.#waiters]) w.resolve(failedAnswer(f));
  }

  #exitWords(): string {
    const e = this.#exit;
    if (!e) return 'its output closed';
    return e.signal ? `signal ${e.signal}` : `exit code ${e.code}`;
  }
}

function failedAnswer(f: { failure: PipeFailure; error: string }): PipeAnswer {
  return { message: undefined, text: '', failure: f.failure, error: f.error };
}

// Which stdio commands this agent runs (issue 20): only those its own allowlist names
// (`--stdio-commands`, MCP_FLEET_STDIO_COMMANDS; default none), so a fleet file or an API call is
// never a way to run an arbitrary program on an agent. Trust boundary: a job's command, args, env
// and cwd are hostile input (the bus checked their shape; this checks what they may do here).
//
// - The program: a job names it as the allowlist does. A bare name is resolved once, at start, on
//   the agent's own PATH, and that absolute path is what runs: the job's env (its PATH too) goes to
//   the process, never into choosing which program the allowlist meant.
// - The environment: the job's, and nothing of the agent's (probe's stdio/child.ts passes only it).
// - The working directory: a fresh empty one per process (the probe's default); a job's `cwd` names
//   a directory under the agent's own stdio root (`--stdio-root`), and only after symlinks are
//   resolved does it count as under it. Without a root, a job that names a cwd is refused.
// - Limits: the probe's (lifetime, stdout and stderr bytes), and at most `concurrency` processes at
//   once (stdio-slots.ts).
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative, resolve } from 'node:path';
import type { Job } from '@mcp-fleet/bus';
import type { CommandSpec } from '@mcp-fleet/probe';

export interface StdioGateOptions {
  /** Programs this agent runs: bare names (found on `path` now) or absolute paths. */
  commands: readonly string[];
  /** Where a job's `cwd` is resolved; none = a job naming a cwd is refused. */
  root?: string | undefined;
  /** The agent's own PATH, to resolve bare names (the CLI passes its environment's; none: bare names are not found). */
  path?: string | undefined;
}

export type Admission = { ok: true; spec: CommandSpec } | { ok: false; reason: string };

/** The flag and variable an operator sets, named in every refusal. */
export const ALLOWLIST_SETTING = '--stdio-commands / MCP_FLEET_STDIO_COMMANDS';

export class StdioGate {
  /** Allowlisted name or path → the absolute program that runs (undefined: not found at start). */
  readonly #programs = new Map<string, string | undefined>();
  readonly #root: string | undefined;

  constructor(opts: StdioGateOptions) {
    const path = opts.path ?? '';
    for (const name of opts.commands) {
      const program = isAbsolute(name) ? name : onPath(name, path);
      this.#programs.set(name, program);
      // A job may name the program by the path the name resolved to, as the operator would see it.
      if (program && !this.#programs.has(program)) this.#programs.set(program, program);
    }
    this.#root = opts.root === undefined ? undefined : realRoot(opts.root);
  }

  /** Allowlisted names, as given (for the agent's start line). */
  get commands(): string[] {
    return [...this.#programs.keys()];
  }

  /** Names and paths a job may give that this agent would start (found at start), for its heartbeats. */
  get runnable(): string[] {
    return [...this.#programs].filter(([, program]) => program !== undefined).map(([name]) => name);
  }

  /** Whether this job's command may run here, and the spec that runs; never spawns anything. */
  admit(command: NonNullable<Job['command']>): Admission {
    if (!this.#programs.has(command.command))
      return {
        ok: false,
        reason: `command ${JSON.stringify(command.command)} is not on this agent's stdio allowlist (${ALLOWLIST_SETTING}${this.#programs.size ? `: ${this.commands.join(', ')}` : ': none'}); it was not started`,
      };
    const program = this.#programs.get(command.command);
    if (!program)
      return {
        ok: false,
        reason: `command ${JSON.stringify(command.command)} is allowlisted but was not found on the agent's PATH when it started; it was not started`,
      };
    const spec: CommandSpec = { command: program, args: command.args, env: command.env };
    if (command.cwd === undefined) return { ok: true, spec };
    const cwd = this.#cwd(command.cwd);
    if (typeof cwd !== 'string') return { ok: false, reason: cwd.reason };
    return { ok: true, spec: { ...spec, cwd } };
  }

  #cwd(given: string): string | { reason: string } {
    if (!this.#root)
      return {
        reason: `the entry names cwd ${JSON.stringify(given)}, and this agent has no stdio root (--stdio-root / MCP_FLEET_STDIO_ROOT) to resolve it under; it was not started`,
      };
    let real: string;
    try {
      real = realpathSync(resolve(this.#root, given));
    } catch {
      return { reason: `cwd ${JSON.stringify(given)} does not exist under the agent's stdio root; it was not started` };
    }
    // After symlinks: a link under the root that points elsewhere is an escape too.
    const rel = relative(this.#root, real);
    if (rel.startsWith('..') || isAbsolute(rel))
      return { reason: `cwd ${JSON.stringify(given)} leads outside the agent's stdio root; it was not started` };
    return real;
  }
}

/** The stdio root with its symlinks resolved; a missing one is the operator's to fix, said before any job. */
function realRoot(root: string): string {
  try {
    return realpathSync(root);
  } catch (err) {
    throw new Error(
      `--stdio-root / MCP_FLEET_STDIO_ROOT: ${root} is not a directory here (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

/** A bare program name on a PATH, as an absolute path; undefined when no directory has it executable. */
function onPath(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** `a,b , c` → the names, empty ones dropped (the flag's and the variable's form). */
export function parseCommandList(list: string | undefined): string[] {
  return (list ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

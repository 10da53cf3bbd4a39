// A stdio target: an MCP server started as a process and spoken to over its stdin and stdout. The
// spec names exactly what runs: the program, its arguments, the whole environment it gets (nothing
// is inherited from the prober's own environment) and, optionally, its working directory (by
// default each process gets a fresh empty one: child.ts).

export interface CommandSpec {
  /** The program: an absolute path, or a name looked up in `env.PATH` (never the prober's PATH). */
  command: string;
  args: readonly string[];
  /** The process's entire environment. */
  env: Readonly<Record<string, string>>;
  /** A working directory to run in; absent = a fresh temporary directory per process. */
  cwd?: string | undefined;
}

/** A probe target: an MCP server's URL, or a command that starts one on stdio. */
export type Target = string | URL | CommandSpec;

export function isCommandSpec(target: Target): target is CommandSpec {
  return typeof target === 'object' && !(target instanceof URL) && typeof target.command === 'string';
}

/** The command line as a report shows it: `stdio: node server.js --flag`. Env values never appear (they are secrets). */
export function displayCommand(spec: CommandSpec): string {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return `stdio: ${[spec.command, ...spec.args].map(quote).join(' ')}`;
}

/** What a probe's context is built from: the URL parsed, or the command as given. */
export function targetOf(target: Target): URL | CommandSpec {
  return isCommandSpec(target) ? target : new URL(target);
}

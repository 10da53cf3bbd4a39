// The mcp-fleet command: one verb per file under commands/.
import { readFileSync } from 'node:fs';
import { EXIT, USAGE, UsageError, VERB_USAGE, verbUsage } from './usage';

type Command = (args: string[], out: (s: string) => void) => Promise<number>;

// Each verb's module is loaded only when it runs: `secrets init` or `apply` need not load the
// probe, the agent's tracing or Next.js (a start in a second instead of several on a busy machine).
const COMMANDS: Record<string, () => Promise<Command>> = {
  detect: async () => (await import('./commands/detect')).detectCommand,
  handshake: async () => (await import('./commands/handshake')).handshakeCommand,
  check: async () => (await import('./commands/check')).checkCommand,
  record: async () => (await import('./commands/record')).recordCommand,
  replay: async () => (await import('./commands/replay')).replayCommand,
  bench: async () => (await import('./commands/bench')).benchCommand,
  sim: async () => (await import('./commands/sim')).simCommand,
  demo: async () => (await import('./commands/demo')).demoCommand,
  up: async () => (await import('./commands/up')).upCommand,
  control: async () => (await import('./commands/control')).controlCommand,
  agent: async () => (await import('./commands/agent')).agentCommand,
  apply: async () => (await import('./commands/apply')).applyCommand,
  validate: async () => (await import('./commands/validate')).validateCommand,
  secrets: async () => (await import('./commands/secrets')).secretsCommand,
  credentials: async () => (await import('./commands/credentials')).credentialsCommand,
  mcp: async () => (await import('./commands/mcp')).mcpCommand,
};

/** The CLI package's version (the workspace's packages move together). */
function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** `--help` or `-h` among a verb's arguments (before a `--`, after which everything is positional). */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
}

export async function main(
  argv: string[],
  out = (s: string) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`),
): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === undefined || verb === 'help' || verb === '--help' || verb === '-h') {
    // `mcp-fleet help detect` is `mcp-fleet detect --help`.
    const about = verb === 'help' && rest[0] !== undefined && VERB_USAGE[rest[0]] ? verbUsage(rest[0]) : USAGE;
    out(about);
    return verb === undefined ? EXIT.usage : EXIT.ok;
  }
  if (verb === '--version' || verb === '-V') {
    out(`mcp-fleet ${version()}`);
    return EXIT.ok;
  }
  const command = COMMANDS[verb];
  if (!command) {
    process.stderr.write(`mcp-fleet: unknown command "${verb}"\nsee mcp-fleet --help\n`);
    return EXIT.usage;
  }
  if (asksForHelp(rest)) {
    out(verbUsage(verb));
    return EXIT.ok;
  }
  try {
    return await (await command())(rest, out);
  } catch (err) {
    // A wrong setting (config's ConfigError names the variable) is the operator's to fix, as a wrong
    // flag is. Imported here: a verb that threw one has loaded config already, and others need not.
    const { ConfigError } = await import('@mcp-fleet/config/env');
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`mcp-fleet ${verb}: ${err.message}\nsee mcp-fleet ${verb} --help\n`);
      return EXIT.usage;
    }
    process.stderr.write(`mcp-fleet: internal error: ${(err as Error)?.message ?? String(err)}\n`);
    return EXIT.internal;
  }
}

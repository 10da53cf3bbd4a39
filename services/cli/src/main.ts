// The mcp-fleet command: one verb per file under commands/.
import { EXIT, USAGE, UsageError } from './usage';

type Command = (args: string[], out: (s: string) => void) => Promise<number>;

// Each verb's module is loaded only when it runs: `secrets init` or `apply` need not load the
// probe, the agent's tracing or Next.js (a start in a second instead of several on a busy machine).
const COMMANDS: Record<string, () => Promise<Command>> = {
  detect: async () => (await import('./commands/detect')).detectCommand,
  handshake: async () => (await import('./commands/handshake')).handshakeCommand,
  bench: async () => (await import('./commands/bench')).benchCommand,
  sim: async () => (await import('./commands/sim')).simCommand,
  demo: async () => (await import('./commands/demo')).demoCommand,
  up: async () => (await import('./commands/up')).upCommand,
  control: async () => (await import('./commands/control')).controlCommand,
  agent: async () => (await import('./commands/agent')).agentCommand,
  apply: async () => (await import('./commands/apply')).applyCommand,
  validate: async () => (await import('./commands/validate')).validateCommand,
  secrets: async () => (await import('./commands/secrets')).secretsCommand,
};

export async function main(
  argv: string[],
  out = (s: string) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`),
): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === undefined || verb === 'help' || verb === '--help' || verb === '-h') {
    out(USAGE);
    return verb === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = COMMANDS[verb];
  try {
    if (!command) throw new UsageError(`unknown command "${verb}"`);
    return await (await command())(rest, out);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`mcp-fleet: ${err.message}\nRun "mcp-fleet help" for usage.\n`);
      return EXIT.usage;
    }
    process.stderr.write(`mcp-fleet: internal error: ${(err as Error)?.message ?? String(err)}\n`);
    return EXIT.internal;
  }
}

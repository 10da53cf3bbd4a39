// The mcp-fleet command: one verb per file under commands/.
import { agentCommand } from './commands/agent';
import { applyCommand } from './commands/apply';
import { benchCommand } from './commands/bench';
import { controlCommand } from './commands/control';
import { demoCommand } from './commands/demo';
import { detectCommand } from './commands/detect';
import { handshakeCommand } from './commands/handshake';
import { simCommand } from './commands/sim';
import { upCommand } from './commands/up';
import { EXIT, USAGE, UsageError } from './usage';

type Command = (args: string[], out: (s: string) => void) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  detect: detectCommand,
  handshake: handshakeCommand,
  bench: benchCommand,
  sim: simCommand,
  demo: demoCommand,
  up: upCommand,
  control: controlCommand,
  agent: agentCommand,
  apply: applyCommand,
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
    return await command(rest, out);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`mcp-fleet: ${err.message}\nRun "mcp-fleet help" for usage.\n`);
      return EXIT.usage;
    }
    process.stderr.write(`mcp-fleet: internal error: ${(err as Error)?.message ?? String(err)}\n`);
    return EXIT.internal;
  }
}

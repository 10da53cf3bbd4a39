// What an agent may start for stdio servers (issue 20), from its flags over its environment:
// `agent` takes `--stdio-commands`, `--stdio-root`, `--stdio-concurrency`; `up` its agents' from the
// environment alone. Bare allowlisted names are found on this process's PATH (this is the edge:
// nothing below reads the environment), never on a job's.
import { type AgentOptions, defaultStdioConcurrency, parseCommandList } from '@mcp-fleet/agent';
import type { StdioSettings } from '@mcp-fleet/config/roles';
import { positiveInt } from './args';

export interface StdioFlags {
  'stdio-commands'?: string | undefined;
  'stdio-root'?: string | undefined;
  'stdio-concurrency'?: string | undefined;
}

export function stdioAgentOptions(
  settings: StdioSettings,
  flags: StdioFlags = {},
  path: string | undefined = process.env.PATH,
): Pick<AgentOptions, 'stdioCommands' | 'stdioRoot' | 'stdioConcurrency' | 'stdioPath'> {
  const commands =
    flags['stdio-commands'] !== undefined ? parseCommandList(flags['stdio-commands']) : settings.commands;
  const root = flags['stdio-root'] ?? settings.root;
  return {
    stdioCommands: commands,
    ...(root ? { stdioRoot: root } : {}),
    stdioConcurrency: positiveInt(
      flags['stdio-concurrency'] ?? settings.concurrency,
      '--stdio-concurrency (MCP_FLEET_STDIO_CONCURRENCY)',
      defaultStdioConcurrency(),
      1024,
    ),
    ...(path ? { stdioPath: path } : {}),
  };
}

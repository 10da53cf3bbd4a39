// A program that starts exactly one of the simulated fleet's stdio servers, for an agent to
// allowlist (the demo's `mcp-fleet up`). Allowlisting `node` itself would let any fleet entry run
// any script: the allowlist names programs, and `node -e …` is a program. The launcher is a
// shell script written with this Node's absolute path, the server script's and the kind baked in,
// so what a job can vary does nothing: its arguments are dropped, and `env -i` starts node with an
// empty environment (a job's NODE_OPTIONS would be code). Its cwd is refused by the agent's gate
// unless the agent has a stdio root.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type StdioServerKind, stdioServer } from './stdio';

/** POSIX single quotes around a path (a quote inside is closed, escaped and reopened). */
const quoted = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Writes `<dir>/mcp-fleet-sim-stdio-<kind>` (mode 0755) and returns its absolute path: the program
 * to name in an agent's `--stdio-commands` and in a fleet entry's `command`. `dir` must be the
 * caller's own (a data directory, or a fresh mkdtemp): a directory others can write to would let
 * them swap the program.
 */
export function writeStdioLauncher(dir: string, kind: StdioServerKind): string {
  const { command, args } = stdioServer(kind);
  const path = join(dir, `mcp-fleet-sim-stdio-${kind}`);
  writeFileSync(
    path,
    [
      '#!/bin/sh',
      `# mcp-fleet's simulated stdio server "${kind}" (written by mcp-fleet up for its demo; see`,
      '# services/fleet-sim/src/stdio-launcher.ts). Arguments are ignored; env -i: nothing of the',
      "# job's environment reaches node.",
      `exec /usr/bin/env -i ${[command, ...args].map(quoted).join(' ')}`,
      '',
    ].join('\n'),
  );
  chmodSync(path, 0o755);
  return path;
}

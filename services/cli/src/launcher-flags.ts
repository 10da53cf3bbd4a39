// The node flags the services image's launcher (bin/mcp-fleet.sh) starts a verb with, read from the
// launcher itself: bench:memory measures the agent as it ships, and the launcher stays the one
// place those flags are written (it says why each is there).
import { readFileSync } from 'node:fs';

const LAUNCHER = new URL('../bin/mcp-fleet.sh', import.meta.url);

/** The flags of `verb`'s case in the launcher (`<verb>)` then `flags="…"`); none for a verb it does not name. */
export function launcherFlags(verb: string): string[] {
  const text = readFileSync(LAUNCHER, 'utf8');
  if (!/^\s*flags=""$/m.test(text) || !/exec node \$flags /.test(text))
    throw new Error(
      'bin/mcp-fleet.sh no longer sets flags="…" per verb for `exec node $flags`: update launcher-flags.ts',
    );
  const found = new RegExp(`^\\s*${verb}\\)\\n\\s*flags="([^"]*)"`, 'm').exec(text);
  return found ? found[1]!.split(/\s+/).filter(Boolean) : [];
}

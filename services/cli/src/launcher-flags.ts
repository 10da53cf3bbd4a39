// The node flags the services image's launcher (bin/mcp-fleet.sh) starts a verb with, read from the
// launcher itself: bench:memory measures the agent as it ships, and the launcher stays the one
// place those flags are written (it says why each is there).
import { readFileSync } from 'node:fs';

const LAUNCHER = new URL('../bin/mcp-fleet.sh', import.meta.url);

/** The flags of `verb`'s line (`<verb>) exec node <flags> "$bin" "$@" ;;`), else of the `*)` line. */
export function launcherFlags(verb: string): string[] {
  const text = readFileSync(LAUNCHER, 'utf8');
  const line = (label: string) =>
    new RegExp(`^\\s*${label.replace(/[*]/g, '\\*')}\\) exec node (.*?)"\\$bin" "\\$@" ;;$`, 'm').exec(text);
  const found = line(verb) ?? line('*');
  if (!found) throw new Error(`bin/mcp-fleet.sh has no line for ${verb} nor a default (*) line: was it changed?`);
  return found[1]!.split(/\s+/).filter(Boolean);
}

// Whether some live agent would start a stdio server's command (issue 20), from what agents say in
// their heartbeats (store's stdioCommandsByRegion). The agents' own allowlists stay the boundary
// that matters (a job they refuse starts nothing); this says so to the operator before a server is
// saved. Where it is said differs by door:
// - the API (and so the dashboard's editor) refuses: someone is adding a server now, and one no
//   agent of its regions would start could only ever fail;
// - a fleet file's apply warns in its summary and applies: a file is declarative and is often
//   applied before its agents start (`mcp-fleet up` applies it before its agents, a deploy rolls
//   control first), so refusing it would make the order of starting matter.

/**
 * Why no live agent of `regions` would start `command`, in words (naming the agents' setting); null
 * when some agent of one of them allows it (a server's regions, or the fleet's when it names none).
 */
export function stdioCommandRefusal(
  byRegion: Readonly<Record<string, readonly string[]>>,
  command: string,
  regions: readonly string[],
): string | null {
  if (regions.some((r) => byRegion[r]?.includes(command))) return null;
  const allowed = [...new Set(regions.flatMap((r) => byRegion[r] ?? []))].sort();
  return (
    `no live agent of ${regions.length === 1 ? 'region' : 'regions'} ${regions.join(', ')} allows ${JSON.stringify(command)} ` +
    `(${allowed.length ? `they allow: ${allowed.join(', ')}` : 'they allow no stdio command'}); ` +
    'name it in an agent’s --stdio-commands / MCP_FLEET_STDIO_COMMANDS there'
  );
}

// A probing process's own floor: MCP_FLEET_PROBE_ALLOW, MCP_FLEET_PROBE_DENY, MCP_FLEET_PROBE_SCHEMES,
// comma-separated (an agent's --allow, --deny, --schemes say the same, and win). The CIDR rule is
// probe's parseCidr and the schemes are the fleet file's.
import { DEFAULT_SCHEMES, PUBLIC_ONLY, parseCidr, type TargetPolicyRanges } from '@mcp-fleet/probe';
import { ConfigError } from './env';

export const FLOOR_VARIABLES = {
  allow: 'MCP_FLEET_PROBE_ALLOW',
  deny: 'MCP_FLEET_PROBE_DENY',
  schemes: 'MCP_FLEET_PROBE_SCHEMES',
} as const;

export type FloorPart = keyof typeof FLOOR_VARIABLES;

/** The parts of a floor that are set (an unset part takes the fallback's). */
export type FloorSettings = Partial<Record<FloorPart, string[]>>;

/**
 * One part's entries from `raw` as given by `where` (a variable or a flag); undefined when unset.
 * Empty counts as unset for a variable, as for every other one; `--allow ''` is "nothing beyond public".
 */
export function floorPart(part: FloorPart, where: string, raw: string | undefined): string[] | undefined {
  if (raw === undefined || (raw.trim() === '' && !where.startsWith('--'))) return undefined;
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (part !== 'schemes') {
    for (const cidr of items)
      if (!parseCidr(cidr)) throw new ConfigError(`${where}: "${cidr}" is not a CIDR like 10.20.0.0/16 or an address`);
    return items;
  }
  const list = items.map((s) => s.toLowerCase().replace(/:$/, ''));
  for (const s of list)
    if (!(DEFAULT_SCHEMES as readonly string[]).includes(s))
      throw new ConfigError(`${where}: "${s}" is not a scheme probes speak (${DEFAULT_SCHEMES.join(', ')})`);
  if (list.length === 0) throw new ConfigError(`${where}: at least one scheme (${DEFAULT_SCHEMES.join(', ')})`);
  return list;
}

/** The floor: `settings`' parts where set, else `fallback`'s (default: public addresses only, http and https). */
export function probeFloorOf(settings: FloorSettings, fallback: TargetPolicyRanges = PUBLIC_ONLY): TargetPolicyRanges {
  return {
    allow: settings.allow ?? [...fallback.allow],
    deny: settings.deny ?? [...fallback.deny],
    schemes: settings.schemes ?? [...(fallback.schemes ?? DEFAULT_SCHEMES)],
  };
}

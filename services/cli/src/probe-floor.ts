// A probing process's own floor (agent, control, up): MCP_FLEET_PROBE_ALLOW, MCP_FLEET_PROBE_DENY,
// MCP_FLEET_PROBE_SCHEMES, comma-separated, or an agent's --allow, --deny, --schemes. Read here,
// at the edge, once; the CIDR rule is probe's parseCidr and the schemes are the fleet file's.
// Unset parts take `fallback`'s (default: public addresses only, http and https).
import { DEFAULT_SCHEMES, PUBLIC_ONLY, parseCidr, type TargetPolicyRanges } from '@mcp-fleet/probe';
import { UsageError } from './usage';

export const FLOOR_VARIABLES = {
  allow: 'MCP_FLEET_PROBE_ALLOW',
  deny: 'MCP_FLEET_PROBE_DENY',
  schemes: 'MCP_FLEET_PROBE_SCHEMES',
} as const;

type Part = keyof typeof FLOOR_VARIABLES;

/** The floor from flags (first) and the environment; a bad entry is a usage error naming where it came from. */
export function probeFloor(
  env: Record<string, string | undefined>,
  flags: Partial<Record<Part, string>> = {},
  fallback: TargetPolicyRanges = PUBLIC_ONLY,
): TargetPolicyRanges {
  const read = (part: Part): { where: string; items: string[] } | undefined => {
    const [where, raw] =
      flags[part] !== undefined ? [`--${part}`, flags[part]] : [FLOOR_VARIABLES[part], env[FLOOR_VARIABLES[part]]];
    // Empty counts as unset, as for every other variable; `--allow ''` is "nothing beyond public".
    if (raw === undefined || (raw.trim() === '' && !where.startsWith('--'))) return undefined;
    return {
      where,
      items: raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    };
  };
  const cidrs = (part: 'allow' | 'deny'): string[] => {
    const got = read(part);
    if (!got) return [...fallback[part]];
    for (const cidr of got.items)
      if (!parseCidr(cidr))
        throw new UsageError(`${got.where}: "${cidr}" is not a CIDR like 10.20.0.0/16 or an address`);
    return got.items;
  };
  const schemes = (): string[] => {
    const got = read('schemes');
    if (!got) return [...(fallback.schemes ?? DEFAULT_SCHEMES)];
    const list = got.items.map((s) => s.toLowerCase().replace(/:$/, ''));
    for (const s of list)
      if (!(DEFAULT_SCHEMES as readonly string[]).includes(s))
        throw new UsageError(`${got.where}: "${s}" is not a scheme probes speak (${DEFAULT_SCHEMES.join(', ')})`);
    if (list.length === 0) throw new UsageError(`${got.where}: at least one scheme (${DEFAULT_SCHEMES.join(', ')})`);
    return list;
  };
  return { allow: cidrs('allow'), deny: cidrs('deny'), schemes: schemes() };
}

// A probing process's own floor (agent, control, up): its role's MCP_FLEET_PROBE_* (config parsed
// them) under an agent's --allow, --deny, --schemes. Unset parts take `fallback`'s (default: public
// addresses only, http and https).
import { type FloorPart, type FloorSettings, floorPart, probeFloorOf } from '@mcp-fleet/config/probe-floor';
import { PUBLIC_ONLY, type TargetPolicyRanges } from '@mcp-fleet/probe';

/** The floor from flags (first) and the environment's settings; a bad flag is an error naming it. */
export function probeFloor(
  settings: FloorSettings,
  flags: Partial<Record<FloorPart, string>> = {},
  fallback: TargetPolicyRanges = PUBLIC_ONLY,
): TargetPolicyRanges {
  const parts: FloorSettings = { ...settings };
  for (const part of ['allow', 'deny', 'schemes'] as const)
    if (flags[part] !== undefined) parts[part] = floorPart(part, `--${part}`, flags[part]);
  return probeFloorOf(parts, fallback);
}

// Tests' servers (the simulated fleet, recorders) listen on loopback, and a probe floor is public
// addresses only unless told: this one lets probes reach 127.0.0.0/8.
import type { TargetPolicyRanges } from '@mcp-fleet/probe';

export const LOOPBACK_FLOOR: TargetPolicyRanges = { allow: ['127.0.0.0/8'], deny: [] };

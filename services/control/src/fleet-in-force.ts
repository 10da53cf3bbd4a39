// The fleet control runs by: its regions and target policy as last applied (the fleet definition
// at start, or a later apply), and where control's own probes may go under them.
import { TargetPolicy } from '@mcp-fleet/probe';

/** The fleet's policy ranges (a fleet definition's, or none). */
export type FleetRanges = { allow: string[]; deny: string[]; schemes?: string[] };

export class FleetInForce {
  regions!: string[];
  ranges!: FleetRanges;
  /** What a server's URL may be. */
  policy!: TargetPolicy;
  /**
   * Where control's own probes may go: its floor narrowed by the fleet's policy, so a fleet applied
   * over the API cannot point them at control's own network.
   */
  probePolicy!: TargetPolicy;
  readonly #floor: TargetPolicy;

  constructor(regions: string[], ranges: FleetRanges, floor: TargetPolicy) {
    this.#floor = floor;
    this.adopt(regions, ranges);
  }

  adopt(regions: string[], ranges: FleetRanges): void {
    this.regions = regions;
    this.ranges = ranges;
    this.policy = new TargetPolicy(ranges);
    this.probePolicy = this.#floor.narrow(ranges);
  }
}

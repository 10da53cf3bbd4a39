// A region's name is a token of NATS subjects, durable and user names (and of the file names its
// secrets get): one rule, with no dependency, so `mcp-fleet secrets init` checks regions without
// loading the bus.
export const REGION_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const REGION_RULE = 'a region is lower-case letters, digits and dashes (it is part of a NATS subject)';

/** Throws when a region name could not be a subject token. */
export function assertRegion(name: string): string {
  if (!REGION_PATTERN.test(name)) throw new TypeError(`invalid region ${JSON.stringify(name)}: ${REGION_RULE}`);
  return name;
}

// `--source-address`: the local IP address agents' probes connect from. `agent` takes one address;
// `up`, which runs one agent per region, takes one for all or one per region
// (`eu-west=127.0.0.1,us-east=127.0.0.2`: two regions on one machine as two callers).
import { checkSourceAddress, SourceAddressError } from '@mcp-fleet/agent';
import { UsageError } from './usage';

/** One address, checked (undefined when not given). */
export function sourceAddressFlag(value: string | undefined): string | undefined {
  try {
    return checkSourceAddress(value);
  } catch (err) {
    if (err instanceof SourceAddressError)
      throw new UsageError(err.message.replace('source address:', '--source-address:'));
    throw err;
  }
}

/** `up`'s form: one address for every region's agent, or `region=ip` pairs, comma-separated. */
export function sourceAddressesFlag(
  value: string | undefined,
  regions: readonly string[],
): { sourceAddress?: string; sourceAddresses?: Record<string, string> } {
  if (value === undefined) return {};
  if (!value.includes('=')) return { sourceAddress: sourceAddressFlag(value)! };
  const byRegion: Record<string, string> = {};
  for (const pair of value.split(',')) {
    const at = pair.indexOf('=');
    const region = pair.slice(0, at).trim();
    if (at < 0 || !regions.includes(region))
      throw new UsageError(
        `--source-address: ${JSON.stringify(pair)} names no region of the fleet (${regions.join(', ')}): give region=ip pairs, or one address for all`,
      );
    if (Object.hasOwn(byRegion, region)) throw new UsageError(`--source-address: region ${region} is given twice`);
    byRegion[region] = sourceAddressFlag(pair.slice(at + 1).trim())!;
  }
  return { sourceAddresses: byRegion };
}

// `mcp-fleet agent --source-address <ip>`: anything that is no IP address is a usage error (exit 2),
// said before the agent connects anywhere.
import { describe, expect, it } from 'vitest';
import { agentCommand } from '../src/commands/agent';
import { sourceAddressesFlag } from '../src/source-address';
import { UsageError } from '../src/usage';

describe('mcp-fleet agent --source-address', () => {
  it('refuses what is no IP address, naming the flag, before dialling NATS', async () => {
    for (const bad of ['eu-west.example', '127.0.0.0/8']) {
      const run = agentCommand(['--region', 'eu-west', '--source-address', bad], () => {});
      await expect(run).rejects.toThrow(UsageError);
      await expect(agentCommand(['--region', 'eu-west', '--source-address', bad], () => {})).rejects.toThrow(
        `--source-address: an IP address of this host, like 192.0.2.10 or 2001:db8::10, not ${JSON.stringify(bad)}`,
      );
    }
  });
});

describe('mcp-fleet up --source-address', () => {
  const regions = ['eu-west', 'us-east'];
  it('takes one address for every agent, or one per region', () => {
    expect(sourceAddressesFlag(undefined, regions)).toEqual({});
    expect(sourceAddressesFlag('127.0.0.2', regions)).toEqual({ sourceAddress: '127.0.0.2' });
    expect(sourceAddressesFlag('eu-west=127.0.0.1, us-east=127.0.0.2', regions)).toEqual({
      sourceAddresses: { 'eu-west': '127.0.0.1', 'us-east': '127.0.0.2' },
    });
  });

  it('refuses a region the fleet does not have, a region twice, and what is no IP address', () => {
    expect(() => sourceAddressesFlag('ap-south=127.0.0.3', regions)).toThrow(/names no region of the fleet/);
    expect(() => sourceAddressesFlag('constructor=127.0.0.3', regions)).toThrow(/names no region of the fleet/);
    expect(() => sourceAddressesFlag('eu-west=127.0.0.1,eu-west=127.0.0.2', regions)).toThrow(/given twice/);
    expect(() => sourceAddressesFlag('eu-west=somewhere', regions)).toThrow(UsageError);
    expect(() => sourceAddressesFlag('somewhere', regions)).toThrow(/--source-address: an IP address/);
  });
});

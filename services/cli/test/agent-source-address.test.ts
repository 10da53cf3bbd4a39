// `mcp-fleet agent --source-address <ip>`: anything that is no IP address is a usage error (exit 2),
// said before the agent connects anywhere.
import { describe, expect, it } from 'vitest';
import { agentCommand } from '../src/commands/agent';
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

// MCP_FLEET_SOURCE_ADDRESS: the local IP address an agent's probes connect from, parsed with the
// agent's other settings; anything that is no IP address is one sentence naming the variable.
import { describe, expect, it } from 'vitest';
import { agentEnv, ConfigError, parseEnv } from '../src';

describe('MCP_FLEET_SOURCE_ADDRESS', () => {
  it('is an IPv4 or IPv6 address, or unset', () => {
    expect(parseEnv(agentEnv, {}).sourceAddress).toBeUndefined();
    expect(parseEnv(agentEnv, { MCP_FLEET_SOURCE_ADDRESS: '' }).sourceAddress).toBeUndefined();
    expect(parseEnv(agentEnv, { MCP_FLEET_SOURCE_ADDRESS: '127.0.0.2' }).sourceAddress).toBe('127.0.0.2');
    expect(parseEnv(agentEnv, { MCP_FLEET_SOURCE_ADDRESS: ' 2001:db8::10 ' }).sourceAddress).toBe('2001:db8::10');
  });

  it.each(['eu-west.example', '10.0.0.0/8', '10.0.0.1:80', '300.1.1.1'])('refuses %s, naming the variable', (bad) => {
    expect(() => parseEnv(agentEnv, { MCP_FLEET_SOURCE_ADDRESS: bad })).toThrow(ConfigError);
    expect(() => parseEnv(agentEnv, { MCP_FLEET_SOURCE_ADDRESS: bad })).toThrow(
      `MCP_FLEET_SOURCE_ADDRESS takes an IP address of this host, like 192.0.2.10 or 2001:db8::10, got ${JSON.stringify(bad)}`,
    );
  });
});

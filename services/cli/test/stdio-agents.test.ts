// An agent's stdio options from its flags over its environment (issue 20): none allowed by default.
import { describe, expect, it } from 'vitest';
import { stdioAgentOptions } from '../src/stdio-agents';
import { UsageError } from '../src/usage';

const unset = { commands: [], root: undefined, concurrency: undefined };

describe("an agent's stdio options", () => {
  it('allow nothing by default, and flags win over the environment', () => {
    expect(stdioAgentOptions(unset, {}, '/usr/bin').stdioCommands).toEqual([]);
    const env = { commands: ['node'], root: '/srv/mcp', concurrency: '3' };
    expect(stdioAgentOptions(env, {}, '/usr/bin')).toEqual({
      stdioCommands: ['node'],
      stdioRoot: '/srv/mcp',
      stdioConcurrency: 3,
      stdioPath: '/usr/bin',
    });
    expect(
      stdioAgentOptions(env, { 'stdio-commands': 'python3, /opt/x', 'stdio-concurrency': '1' }, '/usr/bin'),
    ).toMatchObject({ stdioCommands: ['python3', '/opt/x'], stdioConcurrency: 1 });
    // `--stdio-commands ''` says none, whatever the environment says.
    expect(stdioAgentOptions(env, { 'stdio-commands': '' }).stdioCommands).toEqual([]);
  });

  it('refuses a concurrency that is no whole number', () => {
    expect(() => stdioAgentOptions({ ...unset, concurrency: '0' })).toThrow(UsageError);
    expect(() => stdioAgentOptions(unset, { 'stdio-concurrency': 'many' })).toThrow(/--stdio-concurrency/);
  });
});

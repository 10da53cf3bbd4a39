// A job's target (issue 20): a URL as before, or a stdio server's command instead, exactly one; a
// command's fields bounded as the fleet file bounds them, and no value of its env in an error.
import { describe, expect, it } from 'vitest';
import { JobSchema, parseMessage } from '../src';

const base = {
  jobId: 'hs.t.eu-west.1',
  kind: 'handshake',
  region: 'eu-west',
  serverId: 's',
  serverName: 'local',
  testId: 't',
  headers: {},
  revision: 'newest',
  currentRevision: null,
  timeoutMs: 5_000,
  slot: 1,
  scheduledAt: new Date(1).toISOString(),
};
const parse = (job: unknown) => parseMessage(JobSchema, JSON.stringify(job));

describe("a job's target", () => {
  it('is a URL, as a control from before stdio sends it', () => {
    const got = parse({ ...base, url: 'https://example.com/mcp' });
    expect(got).toMatchObject({ ok: true, value: { url: 'https://example.com/mcp' } });
    expect(got.ok && got.value.command).toBeUndefined();
  });

  it('or a command, its args and env filled', () => {
    expect(parse({ ...base, command: { command: 'node' } })).toMatchObject({
      ok: true,
      value: { command: { command: 'node', args: [], env: {} } },
    });
  });

  it('never both, never neither; hostile command fields are poison, their values unquoted', () => {
    expect(parse({ ...base, url: 'https://example.com/mcp', command: { command: 'node' } })).toMatchObject({
      ok: false,
    });
    expect(parse(base)).toEqual({ ok: false, error: 'url: a job carries a url or a command, exactly one' });
    const secret = 'sk-0123456789';
    for (const command of [
      { command: 'node', env: { PORT: 8080 } },
      { command: 'node', env: { 'BAD NAME': secret } },
      { command: 'node', args: ['x'.repeat(5_000)] },
      { command: 'node', cwd: '../..' },
      { command: '../bin/sh' },
    ]) {
      const got = parse({ ...base, command });
      expect(got.ok, JSON.stringify(command).slice(0, 60)).toBe(false);
      expect(JSON.stringify(got)).not.toContain(secret);
    }
  });
});

// stdio servers in the fleet file (issue 20): `command`, `args`, `env`, `cwd` instead of `url`,
// and the hostile entries the file's boundary refuses, each in words that name the field (and never
// an env value: it may be a secret).
import { describe, expect, it } from 'vitest';
import { expandFleetFile, FleetFileError, fleetFromObject, parseFleet, STDIO_BOUNDS } from '../src';

function problems(text: string, env: Record<string, string> = {}): string[] {
  try {
    parseFleet(text, 'fleet.yaml', env);
  } catch (err) {
    if (err instanceof FleetFileError) return err.problems;
    throw err;
  }
  return [];
}

/** One server entry's YAML lines under `servers:`. */
const fleet = (entry: string) => `servers:\n  - name: local\n${entry}`;

describe('a stdio server in the fleet file', () => {
  it('reads command, args, env (expanded where the file is read) and cwd; its url is its command line as shown', () => {
    const f = parseFleet(
      fleet(
        `    command: node\n    args: [server.js, --port, "0"]\n    env: { API_KEY: "\${LOCAL_KEY}", MODE: test }\n    cwd: servers/local\n`,
      ),
      'fleet.yaml',
      { LOCAL_KEY: 'k-123456789' },
    );
    expect(f.servers[0]).toMatchObject({
      name: 'local',
      url: 'stdio: node server.js --port 0',
      headers: {},
      command: {
        command: 'node',
        args: ['server.js', '--port', '0'],
        env: { API_KEY: 'k-123456789', MODE: 'test' },
        cwd: 'servers/local',
      },
    });
    // Over the API (the object form), nothing is expanded and a reference is a literal.
    const obj = fleetFromObject({ servers: [{ name: 'x', command: '/usr/bin/node', env: { A: `\${B}` } }] }, 'api');
    expect(obj.servers[0]?.command).toEqual({ command: '/usr/bin/node', args: [], env: { A: `\${B}` } });
  });

  it('travels to control as `mcp-fleet apply` sends it: env expanded on the operator side, taken literally there', () => {
    const object = expandFleetFile(fleet(`    command: node\n    env: { API_KEY: "\${LOCAL_KEY}" }\n`), 'fleet.yaml', {
      LOCAL_KEY: 'k-987654321',
    });
    expect(object.servers[0]).toMatchObject({ command: 'node', env: { API_KEY: 'k-987654321' } });
    expect(fleetFromObject(JSON.parse(JSON.stringify(object)), 'api').servers[0]?.command?.env).toEqual({
      API_KEY: 'k-987654321',
    });
    expect(() => expandFleetFile(fleet(`    command: node\n    env: { A: "\${UNSET_VAR}" }\n`), 'f', {})).toThrow(
      /servers\[0\]\.env\.A: the environment variable UNSET_VAR is not set/,
    );
  });

  it('refuses both url and command, and neither', () => {
    expect(problems(fleet('    url: https://example.com/mcp\n    command: node\n'))).toEqual([
      'fleet.yaml:4:14: servers[0].command: give `url` or `command` (a stdio server), not both',
    ]);
    expect(problems(fleet('    interval: 10s\n')).join('\n')).toMatch(/give `url` \(an HTTP server\) or `command`/);
    expect(problems(fleet('    url: https://example.com/mcp\n    args: [x]\n'))).toEqual([
      'fleet.yaml:4:11: servers[0].args: `args` goes with `command` (a stdio server)',
    ]);
    expect(problems(fleet('    command: node\n    headers: { Authorization: x }\n'))).toEqual([
      'fleet.yaml:4:14: servers[0].headers: a stdio server takes `env`, not `headers`',
    ]);
  });

  it('refuses env values that are not strings, without quoting them', () => {
    const out = problems(fleet('    command: node\n    env: { PORT: 8080, DEBUG: true, NESTED: { a: 1 } }\n'));
    expect(out).toHaveLength(3);
    for (const line of out)
      expect(line).toMatch(/servers\[0\]\.env\.(PORT|DEBUG|NESTED): an environment value is a string/);
    expect(out.join('\n')).not.toContain('8080');
    expect(problems(fleet('    command: node\n    env: { "1BAD": x, "A=B": y }\n'))).toHaveLength(2);
  });

  it('refuses huge args, too many args and too much in all', () => {
    const long = 'x'.repeat(STDIO_BOUNDS.argChars + 1);
    expect(problems(fleet(`    command: node\n    args: ["${long}"]\n`))).toEqual([
      `fleet.yaml:4:12: servers[0].args[0]: at most ${STDIO_BOUNDS.argChars} characters`,
    ]);
    const many = Array.from({ length: STDIO_BOUNDS.args + 1 }, () => 'a').join(', ');
    expect(problems(fleet(`    command: node\n    args: [${many}]\n`)).join('\n')).toMatch(/at most 64 arguments/);
    const big = Array.from({ length: 5 }, () => `"${'y'.repeat(STDIO_BOUNDS.argChars)}"`).join(', ');
    expect(problems(fleet(`    command: node\n    args: [${big}]\n`)).join('\n')).toMatch(
      /characters of arguments in all/,
    );
  });

  it('refuses a cwd that escapes (absolute, .., ~) and a command that is a relative path', () => {
    for (const cwd of ['/etc', '../..', 'a/../../b', '~/x', 'a\\..\\..\\b'])
      expect(problems(fleet(`    command: node\n    cwd: "${cwd.replace(/\\/g, '\\\\')}"\n`)).join('\n')).toMatch(
        /servers\[0\]\.cwd: a directory relative to the agent's --stdio-root, without `\.\.`/,
      );
    for (const command of ['./server', 'bin/server', '/opt/../bin/sh', 'node\\u0000x', ''])
      expect(problems(fleet(`    command: "${command}"\n`)).join('\n')).toMatch(/servers\[0\]\.command: /);
  });

  it('keeps a stdio server to the tests that run over stdio', () => {
    expect(
      problems(fleet('    command: node\n    tests:\n      - revision: newest\n        depth: surface\n')),
    ).toEqual([
      "fleet.yaml:6:16: servers[0].tests[0].depth: a stdio server's tests are handshake or conformance, not surface",
    ]);
  });
});

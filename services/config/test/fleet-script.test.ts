// Script and surface tests in the fleet file: steps read, checked with line and column, and keyed.
import { describe, expect, it } from 'vitest';
import { FleetFileError, parseFleet, ScriptSchema, scriptKey, testKey } from '../src';

const fleet = (tests: string) =>
  `servers:\n  - name: weather\n    url: https://weather.example.com/mcp\n    tests:\n${tests}`;

function problems(text: string): string[] {
  try {
    parseFleet(text, 'fleet.yaml');
  } catch (err) {
    if (err instanceof FleetFileError) return err.problems;
    throw err;
  }
  return [];
}

const PARIS = `      - revision: newest
        depth: script
        steps:
          - method: tools/call
            params: { name: get_weather, arguments: { city: Paris } }
            expect:
              - { isError: false }
              - { path: "$.content[0].text", contains: Paris }
              - { latencyMs: 2000 }
`;

describe('script and surface tests in the fleet file', () => {
  it('reads a surface test and a script test with its steps; allowWrites only when it says so', () => {
    const [weather] = parseFleet(
      fleet(
        `      - { revision: newest, depth: surface }\n${PARIS}${PARIS.replace('Paris }', 'Oslo }')}        allowWrites: true\n`,
      ),
    ).servers;
    expect(weather!.tests[0]).toEqual({
      mode: 'newest',
      pinnedRevision: null,
      depth: 'surface',
      intervalMs: null,
      script: null,
    });
    expect(weather!.tests[1]!.script).toEqual({
      steps: [
        {
          method: 'tools/call',
          params: { name: 'get_weather', arguments: { city: 'Paris' } },
          expect: [{ isError: false }, { path: '$.content[0].text', contains: 'Paris' }, { latencyMs: 2000 }],
        },
      ],
    });
    expect(weather!.tests[2]!.script!.allowWrites).toBe(true);
    expect(ScriptSchema.safeParse(weather!.tests[1]!.script).success).toBe(true);
  });

  it('keys two script tests of one revision apart by their steps, and one script alike whatever its key order', () => {
    const a = { steps: [{ method: 'tools/list' }] };
    const b = { steps: [{ method: 'tools/call', params: { name: 'x', arguments: { a: 1, b: 2 } } }] };
    const bReordered = { steps: [{ params: { arguments: { b: 2, a: 1 }, name: 'x' }, method: 'tools/call' }] };
    const key = (script: object) => testKey({ mode: 'newest', pinnedRevision: null, depth: 'script', script });
    expect(key(a)).not.toBe(key(b));
    expect(key(b)).toBe(key(bReordered));
    expect(key(a)).toBe(`newest/script/${scriptKey(a)}`);
    expect(testKey({ mode: 'newest', pinnedRevision: null, depth: 'surface', script: null })).toBe('newest/surface');
    // The same script twice is one test listed twice.
    expect(problems(fleet(PARIS + PARIS))).toEqual([
      expect.stringMatching(/tests: a revision is listed twice at the same depth/),
    ]);
  });

  it('refuses steps where they do not belong, a script without them, too many, and a bad method (hostile file), with line and column', () => {
    const step = '          - method: tools/list\n';
    const cases: [string, RegExp][] = [
      [
        '      - { revision: newest, steps: [{ method: tools/list }] }\n',
        /5:36: servers\[0\].tests\[0\]\.steps: only a test of `depth: script` has steps/,
      ],
      [
        '      - { revision: newest, depth: surface, allowWrites: true }\n',
        /tests\[0\]\.allowWrites: only a test of `depth: script`/,
      ],
      ['      - { revision: newest, depth: script }\n', /tests\[0\]\.depth: a script test needs `steps:`/],
      ['      - { revision: newest, depth: script, steps: [] }\n', /tests\[0\]\.steps: at least one step/],
      [
        `      - revision: newest\n        depth: script\n        steps:\n${step.repeat(17)}`,
        /steps: at most 16 steps/,
      ],
      [
        '      - revision: newest\n        depth: script\n        steps:\n          - method: "tools/call; DROP TABLE runs"\n',
        /8:\d+.*steps\[0\]\.method: an MCP method such as tools\/call/,
      ],
      [
        '      - revision: newest\n        depth: script\n        steps:\n          - { method: tools/list, expect: [{ path: $, bogus: 1 }] }\n',
        /steps\[0\]\.expect\[0\]: an assertion/,
      ],
      [
        `      - revision: newest\n        depth: script\n        steps:\n          - { method: tools/call, params: { name: "${'x'.repeat(5000)}" } }\n`,
        /steps\[0\]\.params: at most 4096 characters as JSON/,
      ],
      ['      - { revision: newest, depth: script, steps: [{ method: tools/list, extra: 1 }] }\n', /extra/],
    ];
    for (const [tests, expected] of cases) {
      const found = problems(fleet(tests));
      expect(found.join('\n'), tests.slice(0, 120)).toMatch(expected);
    }
  });
});

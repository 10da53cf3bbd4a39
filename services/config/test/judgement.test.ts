// The judgement keys in the fleet file (issue 17): `defaults:` for the fleet, a server's own over
// them; good values resolve, each bad one is a problem naming the file, line, column and field.
// And the writer: a server's judgement written back holds only what differs from the defaults.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_JUDGEMENT,
  FleetFileError,
  fleetToYaml,
  judgementFileForm,
  parseFleet,
  resolveJudgement,
  withJudgement,
} from '../src';

function problems(text: string): string[] {
  try {
    parseFleet(text, 'fleet.yaml');
    return [];
  } catch (err) {
    if (err instanceof FleetFileError) return err.problems;
    throw err;
  }
}

const fleet = (defaults: string, server: string) =>
  `regions: [eu-west, us-east]\ndefaults:\n  interval: 30s\n${defaults}servers:\n  - name: orders\n    url: https://orders.example.com/mcp\n${server}`;

const QUORUM = 'half, all, any or a number of regions (1 to 64)';
const RUNS = 'a whole number of runs from 1 to 100';
const SLO = 'a percentage from 50 to 99.999 (the uptime target; 100 leaves no error budget)';

describe('the judgement keys in the fleet file', () => {
  it("resolve a server's own keys over the fleet's defaults over the built-in defaults", () => {
    const parsed = parseFleet(
      fleet(
        '  quorum: all\n  failAfter: 3\n  recheck: 6h\n  slo: 99.9\n',
        '    quorum: 2\n    confirmAfter: 4\n    flapWindow: 45m\n    disagreementAfter: 0s\n',
      ),
      'fleet.yaml',
    );
    expect(parsed.servers[0]!.judgement).toEqual({
      quorum: 2,
      failAfter: 3,
      confirmAfter: 4,
      flapWindowMs: 45 * 60_000,
      recheckMs: 6 * 3_600_000,
      disagreementAfterMs: 0,
      slo: 99.9,
    });
    expect(parseFleet(fleet('', ''), 'fleet.yaml').servers[0]!.judgement).toEqual(DEFAULT_JUDGEMENT);
    for (const quorum of ['half', 'all', 'any', '1', '64'])
      expect(problems(fleet('', `    quorum: ${quorum}\n`)), quorum).toEqual([]);
  });

  it.each([
    ['quorum: 0', QUORUM],
    ['quorum: -1', QUORUM],
    ['quorum: 65', QUORUM],
    ['quorum: most', QUORUM],
    ['quorum: 1.5', QUORUM],
    ['failAfter: 0', RUNS],
    ['failAfter: 1000000000', RUNS],
    ['confirmAfter: two', RUNS],
    ['flapWindow: 1y', 'a duration like 30m or 24h, from 1s to 168h'],
    ['flapWindow: 200h', 'a duration like 30m or 24h, from 1s to 168h'],
    ['recheck: 10s', 'a duration like 30m or 24h, from 1m to 168h'],
    ['recheck: 24', 'expected text, not the number 24'],
    ['disagreementAfter: -5m', 'a duration like 30m or 24h, from 0s to 168h'],
    ['slo: 100', SLO],
    ['slo: 12', SLO],
    ['slo: "99.9"', SLO],
  ])('refuses `%s` in defaults, naming the file, line, column and field', (line, message) => {
    const [field] = line.split(':');
    // Line 4 of the file; the column is the value's.
    const column = 2 + line.indexOf(': ') + 3;
    expect(problems(fleet(`  ${line}\n`, ''))).toEqual([`fleet.yaml:4:${column}: defaults.${field}: ${message}`]);
  });

  it("refuses a bad value in a server's entry, naming the server's field and its line", () => {
    expect(problems(fleet('', '    slo: 100\n'))).toEqual([`fleet.yaml:7:10: servers[0].slo: ${SLO}`]);
    expect(problems(fleet('', '    quorum: most\n'))).toEqual([`fleet.yaml:7:13: servers[0].quorum: ${QUORUM}`]);
    // And a key that is no judgement key at all.
    expect(problems(fleet('', '    quorom: all\n'))[0]).toMatch(/^fleet\.yaml:7:5: servers\[0\]/);
  });
});

describe('a judgement written back', () => {
  it('holds only what differs from the defaults, and reads back the same', () => {
    const j = resolveJudgement({ quorum: 'all', recheck: '90m', disagreementAfter: '0s', slo: 99.95 });
    const entry = withJudgement({ name: 'orders', url: 'https://orders.example.com/mcp' }, j);
    expect(entry).toEqual({
      name: 'orders',
      url: 'https://orders.example.com/mcp',
      quorum: 'all',
      recheck: '90m',
      disagreementAfter: '0h',
      slo: 99.95,
    });
    expect(withJudgement({ name: 'x' }, { ...DEFAULT_JUDGEMENT })).toEqual({ name: 'x' });
    // Over the fleet's own defaults: what differs from them.
    expect(withJudgement({ name: 'x' }, j, resolveJudgement({ quorum: 'all', slo: 99.95 }))).toEqual({
      name: 'x',
      recheck: '90m',
      disagreementAfter: '0h',
    });
    const back = parseFleet(fleetToYaml({ regions: ['eu-west'], servers: [entry] }), 'written');
    expect(back.servers[0]!.judgement).toEqual(j);
  });

  it("in the file's form shows every key", () => {
    expect(judgementFileForm(DEFAULT_JUDGEMENT)).toEqual({
      quorum: 'half',
      failAfter: 1,
      confirmAfter: 2,
      flapWindow: '30m',
      recheck: '24h',
      disagreementAfter: '10m',
      slo: 99.5,
    });
  });
});

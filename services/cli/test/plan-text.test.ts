// A plan's warnings (issue 20: a stdio command no live agent allows yet) are printed under its
// changes, marked `!`; the servers are applied all the same. A control from before warnings sends none.
import type { ApplySummary } from '@mcp-fleet/control';
import { describe, expect, it } from 'vitest';
import { planLines } from '../src/plan-text';

const summary: ApplySummary = {
  dryRun: true,
  created: ['files'],
  revived: [],
  updated: [],
  retired: [],
  unchanged: ['orders'],
  testsCreated: 1,
  testsRetired: 0,
  changes: { files: ['test newest added'] },
  plan: '0123456789abcdef',
  warnings: {},
};

describe("a plan's warnings", () => {
  it('are printed marked !, under the changes, even when nothing else changes', () => {
    const warning = 'not probed until an agent allows its command: no live agent of region eu-west allows "uvx"';
    const text = planLines({ ...summary, warnings: { files: [warning] } });
    expect(text.split('\n')).toEqual([
      expect.stringMatching(/^ {2}\+ +files +create; test newest added$/),
      expect.stringMatching(new RegExp(`^  ! +files +${warning.replace(/[()"]/g, '.')}$`)),
    ]);
    expect(planLines({ ...summary, created: [], changes: {}, warnings: { orders: [warning] } })).toMatch(
      /^ {2}no change\n {2}! +orders +not probed/,
    );
  });

  it('are absent from an older control, and then nothing is printed for them', () => {
    const { warnings: _, ...old } = summary;
    expect(planLines(old as ApplySummary)).not.toContain('!');
  });
});

// The agent's 'auto' concurrency (concurrency.ts) on a clock the test moves: Little's law with
// headroom, doubling while saturated, shrinking slowly, always inside its bounds.
import { describe, expect, it } from 'vitest';
import { ConcurrencySizer } from '../src/concurrency';

function sizer(initial = 64, min = 16, max = 1024) {
  let now = 0;
  const s = new ConcurrencySizer({ min, max, initial, windowMs: 5_000, now: () => now });
  /** One window: `jobs` jobs of `ms` each, started with `inFlight` running. */
  const window = (jobs: number, ms: number, inFlight: number) => {
    for (let i = 0; i < jobs; i++) {
      s.started(inFlight);
      s.ended(ms);
    }
    now += 5_000;
    return s.limit();
  };
  return { s, window };
}

describe('auto concurrency', () => {
  it('sizes to twice rate × job time: 200 jobs/s of 500 ms need 100 in flight, so 200', () => {
    const { window } = sizer(64);
    // Unsaturated (few starts at the limit): 1,000 jobs in 5 s = 200/s, 0.5 s each.
    expect(window(1_000, 500, 10)).toBe(200);
  });

  it('doubles while it runs at its limit (what it measured is what the limit allowed), up to max', () => {
    const { window } = sizer(64, 16, 300);
    expect(window(500, 100, 64)).toBe(128);
    expect(window(500, 100, 128)).toBe(256);
    expect(window(500, 100, 256)).toBe(300);
  });

  it('shrinks by at most a quarter a window, and never below min; holds when nothing ran', () => {
    const { window } = sizer(400);
    expect(window(10, 5, 1)).toBe(300);
    expect(window(0, 0, 0)).toBe(300);
    expect(window(10, 5, 1)).toBe(225);
    let last = 225;
    for (let i = 0; i < 20; i++) last = window(10, 5, 1);
    expect(last).toBe(16);
  });

  it('refuses bounds that are not whole numbers with 1 ≤ min ≤ max', () => {
    expect(() => new ConcurrencySizer({ min: 0, max: 10, initial: 5 })).toThrow(/min and max/);
    expect(() => new ConcurrencySizer({ min: 20, max: 10, initial: 5 })).toThrow(/min and max/);
  });
});

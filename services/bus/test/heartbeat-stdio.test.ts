// A heartbeat's stdio commands (issue 20): what an agent says it starts, so control can refuse a
// stdio server no agent would run. Optional (an agent from before stdio sends none) and bounded at
// the bus boundary: too many, too long or not strings is poison, through the bus's own decoding.
import { describe, expect, it } from 'vitest';
import {
  createMemoryBus,
  HEARTBEAT_STDIO_BOUNDS,
  type Heartbeat,
  HeartbeatSchema,
  parseMessage,
  subjects,
} from '../src';
import { capturedLogger, heartbeat, waitFor } from './fixtures';

const parse = (hb: unknown) => parseMessage(HeartbeatSchema, JSON.stringify(hb));

describe("a heartbeat's stdio commands", () => {
  it('are optional: an agent from before stdio is read as before', () => {
    const got = parse(heartbeat('eu-west'));
    expect(got.ok).toBe(true);
    expect(got.ok && got.value.stdioCommands).toBeUndefined();
    expect(parse({ ...heartbeat('eu-west'), stdioCommands: ['node', '/usr/bin/node'] })).toMatchObject({
      ok: true,
      value: { stdioCommands: ['node', '/usr/bin/node'] },
    });
  });

  it('are bounded: too many, too long, empty or not strings is poison', () => {
    const { commands, commandChars } = HEARTBEAT_STDIO_BOUNDS;
    expect(
      parse({ ...heartbeat('eu-west'), stdioCommands: Array.from({ length: commands }, (_, i) => `c${i}`) }).ok,
    ).toBe(true);
    for (const stdioCommands of [
      Array.from({ length: commands + 1 }, (_, i) => `c${i}`),
      ['/'.padEnd(commandChars + 1, 'x')],
      [''],
      [42],
      [null],
      [{ command: 'node' }],
      'node',
      { node: true },
    ]) {
      const got = parse({ ...heartbeat('eu-west'), stdioCommands });
      expect(got.ok, JSON.stringify(stdioCommands).slice(0, 60)).toBe(false);
      expect(got.ok || got.error).toMatch(/^stdioCommands/);
    }
  });

  it('a hostile one on the wire is dropped as poison (counted), the next honest one delivered', async () => {
    const { log, text } = capturedLogger();
    const bus = createMemoryBus({ log });
    const seen: Heartbeat[] = [];
    const sub = bus.onHeartbeat((h) => seen.push(h));
    try {
      // The sender's own check refuses it before it is published…
      await expect(
        bus.publishHeartbeat({ ...heartbeat('eu-west'), stdioCommands: Array(65).fill('sh') } as Heartbeat),
      ).rejects.toThrow(/stdioCommands/);
      // …and one written around it is poison where it arrives.
      bus.publishRaw(
        subjects().heartbeats('eu-west'),
        JSON.stringify({ ...heartbeat('eu-west'), stdioCommands: ['x'.repeat(100_000)] }),
      );
      await bus.publishHeartbeat({ ...heartbeat('eu-west'), stdioCommands: ['node'] });
      await waitFor(() => seen.length === 1, 5_000, 'the honest heartbeat');
      expect(seen.map((h) => h.stdioCommands)).toEqual([['node']]);
      expect(bus.stats().poison).toBe(1);
      expect(text()).toContain('poison heartbeat dropped');
    } finally {
      await sub.stop();
      await bus.close();
    }
  });
});

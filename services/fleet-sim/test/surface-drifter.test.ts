// surface-drifter as its clients see it: read with the official SDK client (@modelcontextprotocol/client)
// in each revision it speaks, at each surface stage, and across a drift on one open connection.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Revision, type Sim, SURFACE_STAGES, type SurfaceStage, startSim } from '../src/index';

const NAME = 'surface-drifter';
const ERAS: Revision[] = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'];

/** A tool as a client relies on it: its parameters (`?` when optional) and whether it only reads. */
type Listed = Record<string, { params: string[]; readOnly: unknown }>;

/** What each stage serves: each stage one change on from the one before. */
const EXPECTED: Record<SurfaceStage, Listed> = {
  0: {
    get_weather: { params: ['city', 'units?'], readOnly: true },
    create_order: { params: ['item', 'quantity', 'currency?'], readOnly: false },
  },
  // An addition (info): create_order gains the optional `note`.
  1: {
    get_weather: { params: ['city', 'units?'], readOnly: true },
    create_order: { params: ['item', 'quantity', 'currency?', 'note?'], readOnly: false },
  },
  // A warning: get_weather loses its optional `units`.
  2: {
    get_weather: { params: ['city'], readOnly: true },
    create_order: { params: ['item', 'quantity', 'currency?', 'note?'], readOnly: false },
  },
  // Breaking: create_order's `currency` is now required.
  3: {
    get_weather: { params: ['city'], readOnly: true },
    create_order: { params: ['item', 'quantity', 'currency', 'note?'], readOnly: false },
  },
};

/** An SDK client held to one revision: pinned for 2026-07-28, offering only that one for a 2025 one. */
async function connect(url: string, revision: Revision): Promise<Client> {
  const info = { name: 'fleet-sim-test', version: '0.0.0' };
  const client =
    revision === '2026-07-28'
      ? new Client(info, { versionNegotiation: { mode: { pin: revision } } })
      : new Client(info, { supportedProtocolVersions: [revision] });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  expect(client.getNegotiatedProtocolVersion()).toBe(revision);
  return client;
}

async function listed(client: Client): Promise<Listed> {
  const { tools } = await client.listTools();
  return Object.fromEntries(
    tools.map((tool) => {
      const required = new Set(tool.inputSchema.required ?? []);
      const params = Object.keys(tool.inputSchema.properties ?? {}).map((p) => (required.has(p) ? p : `${p}?`));
      return [tool.name, { params, readOnly: tool.annotations?.readOnlyHint }];
    }),
  );
}

let sim: Sim;
beforeAll(async () => {
  sim = await startSim({ only: [NAME, 'drifter'] });
});
afterAll(() => sim?.close());

describe('surface-drifter', () => {
  it('starts at the base stage and speaks 2026-07-28 and the 2025 sessions revisions', () => {
    expect(sim.target(NAME)).toMatchObject({ surfaceStage: 0, newest: '2026-07-28' });
    expect(sim.target(NAME).supports).toEqual(['2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28']);
    // Targets without stages say so.
    expect(sim.target('drifter').surfaceStage).toBeNull();
  });

  it('serves the same tools in every era at each stage, the ones its stage calls for', async () => {
    try {
      for (const stage of SURFACE_STAGES) {
        sim.driftSurface(NAME, stage);
        for (const revision of ERAS) {
          const client = await connect(sim.target(NAME).url, revision);
          try {
            expect(await listed(client), `stage ${stage} in ${revision}`).toEqual(EXPECTED[stage]);
          } finally {
            await client.close();
          }
        }
      }
    } finally {
      sim.driftSurface(NAME, 0);
    }
  });

  it('serves a new stage from the next request on, on a conversation opened before it', async () => {
    for (const revision of ['2026-07-28', '2025-11-25'] as const) {
      const client = await connect(sim.target(NAME).url, revision);
      try {
        expect(await listed(client)).toEqual(EXPECTED[0]);
        sim.driftSurface(NAME, 3);
        expect(sim.target(NAME).surfaceStage).toBe(3);
        expect(await listed(client), revision).toEqual(EXPECTED[3]);
      } finally {
        sim.driftSurface(NAME, 0);
        await client.close();
      }
    }
  });

  it('breaks a call written for the base at stage 3, and still answers get_weather', async () => {
    const client = await connect(sim.target(NAME).url, '2026-07-28');
    try {
      const order = { name: 'create_order', arguments: { item: 'tea', quantity: 2 } };
      const placed = await client.callTool(order);
      expect(placed.isError).toBeFalsy();
      expect(placed.content).toEqual([{ type: 'text', text: 'Order placed: 2 x tea.' }]);
      sim.driftSurface(NAME, 3);
      const broken = await client.callTool(order);
      expect(broken.isError).toBe(true);
      expect(JSON.stringify(broken.content)).toContain('currency');
      const withCurrency = await client.callTool({ ...order, arguments: { ...order.arguments, currency: 'EUR' } });
      expect(withCurrency.isError).toBeFalsy();
      expect(withCurrency.content).toEqual([{ type: 'text', text: 'Order placed: 2 x tea in EUR.' }]);
      expect(await client.callTool({ name: 'get_weather', arguments: { city: 'Paris' } })).toMatchObject({
        content: [{ type: 'text', text: 'Weather in Paris: 18 °C, partly cloudy.' }],
      });
    } finally {
      sim.driftSurface(NAME, 0);
      await client.close();
    }
  });

  it('refuses a stage it does not have, and a surface drift of a target without stages', () => {
    expect(() => sim.driftSurface(NAME, 4 as SurfaceStage)).toThrow(/a surface stage is one of 0, 1, 2, 3: 4/);
    expect(() => sim.driftSurface(NAME, -1 as SurfaceStage)).toThrow(/surface stage/);
    expect(sim.target(NAME).surfaceStage).toBe(0);
    expect(() => sim.driftSurface('drifter', 1)).toThrow('sim target drifter has no surface stages');
    // And a revision drift of the surface drifter: it does not change what it speaks.
    expect(() => sim.drift(NAME, ['2025-11-25'])).toThrow(`sim target ${NAME} does not drift`);
  });
});

describe('a script with surface steps', () => {
  it('applies a step at 0 ms before startSim returns, and later ones on time', async () => {
    const scripted = await startSim({
      only: [NAME],
      script: [
        { afterMs: 0, target: NAME, surface: 2 },
        { afterMs: 150, target: NAME, surface: 3 },
      ],
    });
    try {
      expect(scripted.target(NAME).surfaceStage).toBe(2);
      const client = await connect(scripted.target(NAME).url, '2025-11-25');
      try {
        expect(await listed(client)).toEqual(EXPECTED[2]);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(scripted.target(NAME).surfaceStage).toBe(3);
        expect(await listed(client)).toEqual(EXPECTED[3]);
      } finally {
        await client.close();
      }
    } finally {
      await scripted.close();
    }
  });

  it('is refused whole at start when a step names a stage or a target that has none', async () => {
    await expect(
      startSim({ only: [NAME], script: [{ afterMs: 10, target: NAME, surface: 9 as SurfaceStage }] }),
    ).rejects.toThrow(`drift of ${NAME} names no surface stage`);
    await expect(
      startSim({ only: [NAME, 'drifter'], script: [{ afterMs: 10, target: 'drifter', surface: 1 }] }),
    ).rejects.toThrow('sim target drifter has no surface stages');
    await expect(
      startSim({ only: [NAME], script: [{ afterMs: 10, target: NAME, revisions: ['2025-11-25'] }] }),
    ).rejects.toThrow(`sim target ${NAME} does not drift`);
  });
});

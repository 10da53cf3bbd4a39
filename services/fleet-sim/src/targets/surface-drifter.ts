// A server whose tools change on a schedule, for surface snapshots and their change history: an
// SDK 2.4 McpServer (2026-07-28, and the 2025 sessions revisions statelessly) whose tools are those
// of its current surface stage. Every era is served by the same factory, so at each stage both eras
// offer the same surface (cross-era differences are dual-era-diff's business).
//
//   stage 0, the base: get_weather {city, units?} (read-only) and create_order {item, quantity, currency?}
//   stage 1, an addition (info): create_order gains the optional parameter `note`
//   stage 2, a warning: get_weather loses its optional parameter `units`
//   stage 3, a breaking change: create_order's `currency` becomes required
//
// Back to the base from stage 3 adds `units` (info), makes `currency` optional again and drops
// `note` (a warning): nothing breaks on the way back.
import { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { SurfaceDrift, type SurfaceStage } from '../drift';
import { SDK_VERSIONS } from '../sdk-versions';
import type { TargetDefinition } from '../target';
import { serveV2, v2Endpoint } from '../v2';

const CITY = z.string().min(1).max(100).describe('The city, e.g. Paris');
const UNITS = z.enum(['celsius', 'fahrenheit']).describe('Temperature units (default celsius)');
const CURRENCY = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .describe('ISO 4217 currency code, e.g. EUR');

/** The SDK server for one stage: what a release of this server would register. */
export function createSurfaceServer(name: string, stage: SurfaceStage): McpServer {
  const server = new McpServer({ name, version: SDK_VERSIONS['@modelcontextprotocol/server'] });
  server.registerTool(
    'get_weather',
    {
      description: 'The current weather in a city.',
      inputSchema: z.object({ city: CITY, ...(stage < 2 ? { units: UNITS.optional() } : {}) }),
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args) => ({
      content: [
        {
          type: 'text',
          text: `Weather in ${args.city}: ${args.units === 'fahrenheit' ? '64 °F' : '18 °C'}, partly cloudy.`,
        },
      ],
    }),
  );
  server.registerTool(
    'create_order',
    {
      description: 'Places an order for an item.',
      inputSchema: z.object({
        item: z.string().min(1).max(100).describe('What to order'),
        quantity: z.number().int().min(1).max(1000).describe('How many'),
        currency: stage < 3 ? CURRENCY.optional() : CURRENCY,
        ...(stage >= 1 ? { note: z.string().max(200).optional().describe('A note for the seller') } : {}),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (args) => ({
      content: [
        {
          type: 'text',
          text: `Order placed: ${args.quantity} x ${args.item}${args.currency ? ` in ${args.currency}` : ''}.`,
        },
      ],
    }),
  );
  return server;
}

export const surfaceDrifter: TargetDefinition = {
  name: 'surface-drifter',
  kind: 'sdk',
  description:
    'SDK 2.4 McpServer whose tools change by stage (0 base, 1 addition, 2 warning, 3 breaking); 2026-07-28 plus stateless 2025',
  async start(ctx) {
    const { name } = ctx;
    const surface = new SurfaceDrift();
    // createMcpHandler calls the factory once per request: a new stage is served from the next one.
    const endpoint = v2Endpoint(name, { legacy: 'stateless', create: () => createSurfaceServer(name, surface.stage) });
    const running = await serveV2(ctx, endpoint, () => ['2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28']);
    return { ...running, surfaceStage: () => surface.stage, driftSurface: (stage) => surface.drift(stage) };
  },
};

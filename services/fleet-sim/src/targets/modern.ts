import type { RunningTarget, TargetContext, TargetDefinition } from '../target';
import { serveV2, v2Endpoint } from '../v2';

function startModern(ctx: TargetContext, legacy: 'stateless' | 'reject'): Promise<RunningTarget> {
  return serveV2(ctx, v2Endpoint(ctx.name, { legacy }), () =>
    legacy === 'stateless' ? ['2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'] : ['2026-07-28'],
  );
}

export const modern: TargetDefinition = {
  name: 'modern',
  kind: 'sdk',
  description: 'SDK 2.4 createMcpHandler: server/discover (2026-07-28) plus stateless 2025 initialize',
  start: (ctx) => startModern(ctx, 'stateless'),
};

export const modernOnly: TargetDefinition = {
  name: 'modern-only',
  kind: 'sdk',
  description: "SDK 2.4 createMcpHandler with legacy: 'reject': 2026-07-28 only, initialize gets 400 -32022",
  start: (ctx) => startModern(ctx, 'reject'),
};

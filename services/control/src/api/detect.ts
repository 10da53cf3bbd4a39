// What a server speaks: detect it now (control's own probe, under its probe policy), or read the
// latest detection stored for a server.

import { DEFAULT_TIMEOUT_MS, headerMap, newTargetUrl } from '@mcp-fleet/config';
import { detect } from '@mcp-fleet/probe';
import { latestDetection } from '@mcp-fleet/store';
import { z } from 'zod';
import { parseBody, type Router } from '../http';
import type { ApiContext } from './context';
import { serverOr404 } from './lookups';
import { checkTarget, type OwnProbes } from './own-probes';

const headersSchema = headerMap.refine((h) => Object.keys(h).length <= 50, 'at most 50 headers');
const Detect = z.strictObject({
  url: newTargetUrl,
  headers: headersSchema.default({}),
  timeoutMs: z.number().int().min(100).max(20_000).optional(),
});

export function detectRoutes(router: Router, ctx: ApiContext, probes: OwnProbes): void {
  router
    .on('GET', '/api/servers/:id/detection', async (req) => {
      const server = await serverOr404(ctx.db, req.params.id!);
      return { json: { detection: await latestDetection(ctx.db, server.id) } };
    })
    .on('POST', '/api/detect', async (req) => {
      const body = parseBody(Detect, req.body);
      checkTarget(body.url, ctx.probePolicy());
      return {
        json: await detect(body.url, {
          headers: body.headers,
          timeoutMs: body.timeoutMs ?? DEFAULT_TIMEOUT_MS,
          dispatcher: probes.dispatcher(),
        }),
      };
    });
}

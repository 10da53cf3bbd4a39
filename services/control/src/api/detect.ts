// What a server speaks: detect it now (control's own probe, under its probe policy), or read the
// latest detection stored for a server. A detection may name a credential (`credentialId`, issue
// 18) instead of giving headers: its headers go only to its own origin (credentials.ts).

import { DEFAULT_TIMEOUT_MS, headerMap, newTargetUrl } from '@mcp-fleet/config';
import { detect } from '@mcp-fleet/probe';
import { latestDetection } from '@mcp-fleet/store';
import { z } from 'zod';
import { parseBody, type Router } from '../http';
import type { ApiContext } from './context';
import { credentialIdField, requestHeaders } from './credentials';
import { serverOr404 } from './lookups';
import { checkTarget, type OwnProbes } from './own-probes';

const headersSchema = headerMap.refine((h) => Object.keys(h).length <= 50, 'at most 50 headers');
const Detect = z.strictObject({
  url: newTargetUrl,
  headers: headersSchema.optional(),
  credentialId: credentialIdField.optional(),
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
      const headers = await requestHeaders(ctx.db, body.url, body);
      return {
        json: await detect(body.url, {
          headers,
          timeoutMs: body.timeoutMs ?? DEFAULT_TIMEOUT_MS,
          dispatcher: probes.dispatcher(),
        }),
      };
    });
}

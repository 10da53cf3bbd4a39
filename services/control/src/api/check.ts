// POST /api/check: a conformance run by control itself (issue 18's MCP tools call it), answering
// what `mcp-fleet check <url> --json` prints (probe's checkJson). It makes control send traffic to
// a URL the caller names, so it needs admin, obeys control's probe policy (address literals here,
// names after DNS in the guarded dispatcher) exactly as /api/detect does, and a credential it names
// goes only to that credential's origin.
import { headerMap, newTargetUrl } from '@mcp-fleet/config';
import {
  type ConformanceProtocol,
  checkJson,
  conformance,
  isRevision,
  REVISION_NAMES,
  redactStrings,
  secretsOf,
} from '@mcp-fleet/probe';
import { z } from 'zod';
import { parseBody, type Router } from '../http';
import type { ApiContext } from './context';
import { credentialIdField, requestHeaders } from './credentials';
import { checkTarget, type OwnProbes } from './own-probes';

const protocolField = z
  .string()
  .refine((p) => p === 'auto' || p === 'legacy' || isRevision(p), {
    message: `auto, legacy or one of ${REVISION_NAMES.join(', ')}`,
  })
  .transform((p) => p as ConformanceProtocol);

/** Trust boundary: the body is hostile input, checked as /api/detect's is. */
const Check = z.strictObject({
  url: newTargetUrl,
  protocol: protocolField.default('auto'),
  headers: headerMap.refine((h) => Object.keys(h).length <= 50, 'at most 50 headers').optional(),
  credentialId: credentialIdField.optional(),
  /** Each request's bound; the run's own deadline (the runner's) still applies. */
  timeoutMs: z.number().int().min(100).max(20_000).optional(),
});

export function checkRoutes(router: Router, ctx: ApiContext, probes: OwnProbes): void {
  router.on('POST', '/api/check', async (req) => {
    const body = parseBody(Check, req.body);
    checkTarget(body.url, ctx.probePolicy());
    const headers = await requestHeaders(ctx.db, body.url, body);
    const run = await conformance(body.url, {
      protocol: body.protocol,
      headers,
      ...(body.timeoutMs !== undefined ? { timeoutMs: body.timeoutMs } : {}),
      dispatcher: probes.dispatcher(),
    });
    // The runner redacts what it reports; redacted again here, as the CLI does, before it leaves
    // control: whatever a server echoed, no credential sent to it goes back to the caller.
    return { json: checkJson(redactStrings(run, secretsOf(headers, body.url))) };
  });
}

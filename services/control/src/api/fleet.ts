// The fleet as a whole: its summary, a fleet definition applied or planned, its agents and regions.

import { type FleetDefinition, FleetFileError, fleetFromObject, parseFleet } from '@mcp-fleet/config';
import { AGENT_STALE_AFTER_SECONDS, fleetSummary, listAgents, RANGES, stdioCommandsByRegion } from '@mcp-fleet/store';
import { PlanChangedError } from '../apply';
import { HttpError, type Router } from '../http';
import type { ApiContext } from './context';
import { flagParam, noKey, sinceParam } from './params';

export function fleetRoutes(router: Router, ctx: ApiContext): void {
  router
    .on('GET', '/api/fleet/summary', async (req) => ({
      json: await fleetSummary(ctx.db, { since: sinceParam(req.query) ?? new Date(Date.now() - RANGES['24h'].ms) }),
    }))
    .on(
      'POST',
      '/api/fleet',
      async (req) => {
        // A fleet sent here is read by its sender: `${NAME}` in a YAML body is refused, never expanded
        // against control's environment (issue 12: any page could read it), and the JSON form — what
        // `mcp-fleet apply` sends, expanded on the operator's side — is taken literally. YAML only by
        // its own media type: a JSON string body is no fleet file.
        if (req.body === undefined)
          throw new HttpError(
            415,
            'send the fleet as JSON, its object form (content-type: application/json), or the file as YAML (application/yaml)',
          );
        let fleet: FleetDefinition;
        try {
          if (req.bodyKind === 'yaml' && typeof req.body === 'string')
            fleet = parseFleet(req.body, 'request body', 'refuse');
          else if (typeof req.body === 'string')
            throw new HttpError(415, 'a JSON body is the fleet as an object; send a fleet file as application/yaml');
          else fleet = fleetFromObject(req.body, 'request body');
        } catch (err) {
          if (err instanceof FleetFileError) throw new HttpError(400, err.message);
          throw err;
        }
        // ?dryRun=1: the plan, nothing written. ?plan=<id of a dry run's plan>: apply only if it is still that plan.
        const dryRun = flagParam(req.query, 'dryRun');
        const expectPlan = req.query.get('plan') ?? undefined;
        if (expectPlan !== undefined && !/^[0-9a-f]{16}$/.test(expectPlan))
          throw new HttpError(400, 'plan: the plan of a dry run (16 hex digits)');
        try {
          return { json: await ctx.apply(fleet, { dryRun, expectPlan }) };
        } catch (err) {
          if (err instanceof PlanChangedError) throw new HttpError(409, err.message);
          throw noKey(err);
        }
      },
      { accepts: ['yaml', 'json'] },
    )
    // Agents stay listed until retention forgets them (7 days): an on-call reader needs to see which are gone.
    .on('GET', '/api/agents', async () => ({
      json: { agents: await listAgents(ctx.db), staleAfterSeconds: AGENT_STALE_AFTER_SECONDS },
    }))
    // Per region of the fleet, the stdio commands some live agent runs: what the editor offers (issue 20).
    .on('GET', '/api/stdio-commands', async () => {
      const byRegion = await stdioCommandsByRegion(ctx.db);
      return {
        json: {
          regions: Object.fromEntries(ctx.regions().map((r) => [r, byRegion[r] ?? []])),
          staleAfterSeconds: AGENT_STALE_AFTER_SECONDS,
        },
      };
    })
    .on('GET', '/api/regions', async () => ({ json: { regions: ctx.regions() } }));
}

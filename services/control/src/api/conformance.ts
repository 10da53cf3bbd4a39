// The fleet's conformance: the server × check matrix (each check's worst status across regions,
// its level and the era that judged it), filterable by era and level. Query parameters are hostile
// input: a value not in the list is a 400 naming the parameter, never passed on to SQL as a filter.
import { conformanceMatrix } from '@mcp-fleet/store';
import { HttpError, type Router } from '../http';
import type { ApiContext } from './context';

const ERAS = ['legacy', 'modern'] as const;
const LEVELS = ['MUST', 'SHOULD'] as const;

function oneOf<T extends string>(q: URLSearchParams, name: string, values: readonly T[]): T | undefined {
  const raw = q.get(name);
  if (raw === null || raw === '') return undefined;
  if (!(values as readonly string[]).includes(raw)) throw new HttpError(400, `${name}: one of ${values.join(', ')}`);
  return raw as T;
}

export function conformanceRoutes(router: Router, ctx: ApiContext): void {
  router.on('GET', '/api/conformance', async (req) => {
    const era = oneOf(req.query, 'era', ERAS);
    const level = oneOf(req.query, 'level', LEVELS);
    const servers = await conformanceMatrix(ctx.db, { era, level });
    const checks = [...new Set(servers.flatMap((s) => s.cells.map((c) => c.checkId)))].sort();
    return { json: { era: era ?? null, level: level ?? null, checks, servers } };
  });
}

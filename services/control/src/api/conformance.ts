// The fleet's conformance: the server × check matrix the dashboard shows (store's conformanceMatrixNow:
// each check's worst status across regions and tests, of the era each server speaks now), filterable
// by era and level. Query parameters are hostile
// input: a value not in the list is a 400 naming the parameter, never passed on to SQL as a filter.
import { conformanceMatrixNow } from '@mcp-fleet/store';
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
    const matrix = await conformanceMatrixNow(ctx.db, { era, level });
    return { json: { era: era ?? null, level: level ?? null, ...matrix } };
  });
}

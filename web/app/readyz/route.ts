// Readiness for containers: the dashboard can read its database.
import { sql } from 'drizzle-orm';
import { getDb } from '../../lib/db';

export const dynamic = 'force-dynamic';

export async function GET() {
  try {
    await (await getDb()).execute(sql`select 1`);
    return Response.json({ ok: true });
  } catch (err) {
    return Response.json({ ok: false, error: (err as Error).message }, { status: 503 });
  }
}

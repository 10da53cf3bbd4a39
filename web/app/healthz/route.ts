// Liveness for containers: the server answers. No database, so a database outage restarts nothing.
export const dynamic = 'force-dynamic';

export function GET() {
  return Response.json({ ok: true });
}

import { getServer, serverConformanceResults, serversOverview } from '@mcp-fleet/store';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { type DepthChoice, ServerEditor } from '../../../../components/server-editor';
import { control } from '../../../../lib/control';
import { getDb } from '../../../../lib/db';
import { utc } from '../../../../lib/format';
import { REVISION_NAMES, revisionLabel } from '../../../../lib/revisions';

export const metadata = { title: 'Edit server' };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export default async function EditServer({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  if (!UUID.test(id)) notFound();
  const db = await getDb();
  const [server, overview, conformance, { regions }, stdio] = await Promise.all([
    getServer(db, id),
    serversOverview(db, { ids: [id] }),
    serverConformanceResults(db, id),
    control<{ regions: string[] }>('GET', '/api/regions'),
    control<{ regions: Record<string, string[]> }>('GET', '/api/stdio-commands'),
  ]);
  if (!server) notFound();
  // A retired server is read-only (control's API refuses changes with 409): say so, offer no form.
  if (server.retiredAt)
    return (
      <>
        <p className="muted" style={{ margin: '0 0 4px' }}>
          <Link href={`/servers/${id}`}>{server.name}</Link> /
        </p>
        <h1>Edit {server.name}</h1>
        <p className="notice retired" data-testid="retired-notice">
          This server was retired {utc(server.retiredAt)} and is read-only: its history is kept on{' '}
          <Link href={`/servers/${id}`}>its page</Link>. Apply a fleet file that names it, or add a server, to watch it
          again.
        </p>
      </>
    );
  const choice = (t: { mode: string; pinnedRevision: string | null }) =>
    t.mode === 'newest' ? 'newest' : (t.pinnedRevision ?? '');
  // The overview lists every test; those with conformance depth are the conformance read's.
  const conformanceIds = new Set(conformance.tests.map((t) => t.id));
  const all = (overview[0]?.tests ?? []).map((t) => ({ revision: choice(t), conformance: conformanceIds.has(t.id) }));
  const tests = [...new Set(all.map((t) => t.revision))];
  const depths: Record<string, DepthChoice> = {};
  for (const revision of tests) {
    const kinds = new Set(all.filter((t) => t.revision === revision).map((t) => t.conformance));
    if (kinds.size === 2) depths[revision] = 'both';
    else if (kinds.has(true)) depths[revision] = 'conformance';
  }
  return (
    <>
      <p className="muted" style={{ margin: '0 0 4px' }}>
        <Link href={`/servers/${id}`}>{server.name}</Link> /
      </p>
      <h1>Edit {server.name}</h1>
      {server.source === 'file' && (
        <p className="notice">This server comes from the fleet file: the next apply of the file sets it back.</p>
      )}
      <ServerEditor
        initial={{
          id,
          name: server.name,
          url: server.url,
          headerNames: Object.keys(server.headers),
          regions: server.regions ?? [],
          interval: `${server.intervalMs / 1000}s`,
          timeout: `${server.timeoutMs / 1000}s`,
          tests,
          depths,
          // A stdio server's env by names only: its values never leave the server side.
          ...(server.command
            ? {
                command: {
                  command: server.command.command,
                  args: server.command.args,
                  envNames: Object.keys(server.command.env),
                  cwd: server.command.cwd ?? '',
                },
              }
            : {}),
        }}
        fleetRegions={regions}
        stdioCommands={stdio.regions}
        revisions={REVISION_NAMES.map((r) => ({ revision: r, label: revisionLabel(r) }))}
      />
    </>
  );
}

import { getServer, serversOverview } from '@mcp-fleet/store';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { ServerEditor } from '../../../../components/server-editor';
import { control } from '../../../../lib/control';
import { getDb } from '../../../../lib/db';
import { REVISION_NAMES, revisionLabel } from '../../../../lib/revisions';

export const metadata = { title: 'Edit server' };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export default async function EditServer({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  if (!UUID.test(id)) notFound();
  const db = await getDb();
  const [server, overview, { regions }] = await Promise.all([
    getServer(db, id),
    serversOverview(db, { ids: [id] }),
    control<{ regions: string[] }>('GET', '/api/regions'),
  ]);
  if (!server || server.retiredAt) notFound();
  const tests = (overview[0]?.tests ?? []).map((t) => (t.mode === 'newest' ? 'newest' : (t.pinnedRevision ?? '')));
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
        }}
        fleetRegions={regions}
        revisions={REVISION_NAMES.map((r) => ({ revision: r, label: revisionLabel(r) }))}
      />
    </>
  );
}

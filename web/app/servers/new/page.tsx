import { ServerEditor } from '../../../components/server-editor';
import { control } from '../../../lib/control';
import { REVISION_NAMES, revisionLabel } from '../../../lib/revisions';

export const metadata = { title: 'Add server' };
export const dynamic = 'force-dynamic';

export default async function NewServer() {
  const [{ regions }, stdio] = await Promise.all([
    control<{ regions: string[] }>('GET', '/api/regions'),
    control<{ regions: Record<string, string[]> }>('GET', '/api/stdio-commands'),
  ]);
  return (
    <>
      <h1>Add a server</h1>
      <ServerEditor
        initial={{ name: '', url: '', headerNames: [], regions: [], interval: '', timeout: '', tests: ['newest'] }}
        fleetRegions={regions}
        stdioCommands={stdio.regions}
        revisions={REVISION_NAMES.map((r) => ({ revision: r, label: revisionLabel(r) }))}
      />
    </>
  );
}

'use server';
// What the editor asks of the control plane: detect a URL's protocol, save a server and its tests.
// Stored credentials never go to the browser: a header left blank keeps its stored value here.
// Each action needs an admin session when sign-in is on (proxy.ts turns away requests without a
// session; this is the second lock), and Next refuses a server action whose Origin is not this
// dashboard's Host (as proxy.ts does for every POST), so another site cannot drive them.
import { getServer } from '@mcp-fleet/store';
import { redirect } from 'next/navigation';
import { ControlError, control } from '../../lib/control';
import { getDb } from '../../lib/db';
import { writeRefusal } from '../../lib/session';

export interface HeaderInput {
  name: string;
  /** Empty = keep the stored value (editing), or no value. */
  value: string;
}

export type DetectAnswer =
  | {
      ok: true;
      detection: {
        outcome: string;
        newestSupported: string | null;
        revisions: unknown[];
        retryAfterHeader?: string | null;
      };
    }
  | { ok: false; error: string };

export async function detectProtocol(input: {
  url: string;
  headers: HeaderInput[];
  serverId?: string;
}): Promise<DetectAnswer> {
  const refused = await writeRefusal();
  if (refused) return { ok: false, error: refused };
  try {
    const headers = await resolveHeaders(input.headers, input.url, input.serverId);
    const detection = await control<Extract<DetectAnswer, { ok: true }>['detection']>('POST', '/api/detect', {
      url: input.url,
      headers,
    });
    return { ok: true, detection };
  } catch (err) {
    return { ok: false, error: message(err) };
  }
}

export interface ServerForm {
  /** Set when editing. */
  id?: string;
  name: string;
  url: string;
  headers: HeaderInput[];
  /** Empty = every region. */
  regions: string[];
  interval: string;
  timeout: string;
  /** `newest` and/or dated revisions. */
  tests: string[];
}

export async function saveServer(form: ServerForm): Promise<{ ok: false; error: string }> {
  const refused = await writeRefusal();
  if (refused) return { ok: false, error: refused };
  let id = form.id;
  try {
    const headers = await resolveHeaders(form.headers, form.url, form.id);
    const common = {
      url: form.url.trim(),
      headers,
      regions: form.regions.length ? form.regions : null,
      ...(form.interval.trim() ? { interval: form.interval.trim() } : {}),
      ...(form.timeout.trim() ? { timeout: form.timeout.trim() } : {}),
    };
    if (!id) {
      if (form.tests.length === 0) return { ok: false, error: 'Pick at least one test.' };
      const created = await control<{ server: { id: string } }>('POST', '/api/servers', {
        name: form.name.trim(),
        ...common,
        tests: form.tests.map((revision) => ({ revision })),
      });
      id = created.server.id;
    } else {
      await control('PATCH', `/api/servers/${id}`, common);
      const { tests } = await control<{ tests: { id: string; mode: string; pinnedRevision: string | null }[] }>(
        'GET',
        `/api/servers/${id}/tests`,
      );
      const key = (t: { mode: string; pinnedRevision: string | null }) =>
        t.mode === 'newest' ? 'newest' : t.pinnedRevision;
      // Add first: a pinned test that does not pass today is refused before anything is retired.
      for (const revision of form.tests)
        if (!tests.some((t) => key(t) === revision)) await control('POST', `/api/servers/${id}/tests`, { revision });
      for (const t of tests) if (!form.tests.includes(key(t) ?? '')) await control('DELETE', `/api/tests/${t.id}`);
    }
  } catch (err) {
    return { ok: false, error: message(err) };
  }
  redirect(`/servers/${id}`);
}

/**
 * Blank values take the stored ones, but only toward the stored URL's origin: a stored credential
 * is never sent to a host it was not given for.
 */
async function resolveHeaders(
  headers: HeaderInput[],
  url: string,
  serverId: string | undefined,
): Promise<Record<string, string>> {
  const server = serverId ? await getServer(await getDb(), serverId) : null;
  const sameOrigin = server !== null && origin(server.url) !== null && origin(server.url) === origin(url);
  const stored = sameOrigin ? server.headers : {};
  const out: Record<string, string> = {};
  for (const h of headers) {
    const name = h.name.trim();
    if (!name) continue;
    const value = h.value !== '' ? h.value : stored[name];
    if (value === undefined)
      throw new Error(
        server && !sameOrigin
          ? `header ${name}: enter its value again (stored credentials are only sent to ${origin(server.url)})`
          : `header ${name}: enter a value`,
      );
    out[name] = value;
  }
  return out;
}

function origin(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

function message(err: unknown): string {
  if (err instanceof ControlError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

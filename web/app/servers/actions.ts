'use server';
// What the editor asks of the control plane: detect a URL's protocol, save a server and its tests.
// Stored credentials never go to the browser: a header left blank, or a URL part left masked
// (••••••), keeps its stored value here — by store's one rule, only toward the stored origin.
// Each action needs an admin session when sign-in is on (proxy.ts turns away requests without a
// session; this is the second lock), and Next refuses a server action whose Origin is not this
// dashboard's Host (as proxy.ts does for every POST), so another site cannot drive them.
import { URL_MASK } from '@mcp-fleet/probe';
import { getServer, keptHeaders, keptUrl, serverConformanceResults } from '@mcp-fleet/store';
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
        /** The one cause of every revision's failure (probe's cause.ts), or null. */
        cause?: string | null;
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
    const { url, headers } = await resolveCredentials(input.url, input.headers, input.serverId);
    const detection = await control<Extract<DetectAnswer, { ok: true }>['detection']>('POST', '/api/detect', {
      url,
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
  /** `newest` and/or dated revisions, each with its depth. */
  tests: TestChoice[];
  /** A stdio server (issue 20): its command instead of `url` and `headers`. */
  command?: CommandInput;
}

/** A stdio server's command as the editor gives it: control's API checks it again, and who may run it. */
export interface CommandInput {
  command: string;
  args: string[];
  /** Empty value = keep the stored one (editing). */
  env: HeaderInput[];
  cwd: string;
}

/** `handshake` opens a conversation; `conformance` then runs the checks of the era it negotiated. */
export type Depth = 'handshake' | 'conformance';

export interface TestChoice {
  /** `newest` or a dated revision (a pin). */
  revision: string;
  depth: Depth;
}

export async function saveServer(form: ServerForm): Promise<{ ok: false; error: string }> {
  const refused = await writeRefusal();
  if (refused) return { ok: false, error: refused };
  let id = form.id;
  try {
    const target = form.command
      ? commandBody(form.command, id !== undefined)
      : await resolveCredentials(form.url, form.headers, form.id);
    const common = {
      ...target,
      regions: form.regions.length ? form.regions : null,
      ...(form.interval.trim() ? { interval: form.interval.trim() } : {}),
      ...(form.timeout.trim() ? { timeout: form.timeout.trim() } : {}),
    };
    if (!id) {
      if (form.tests.length === 0) return { ok: false, error: 'Pick at least one test.' };
      const created = await control<{ server: { id: string } }>('POST', '/api/servers', {
        name: form.name.trim(),
        ...common,
        tests: form.tests.map(testChoice).map(asSent),
      });
      id = created.server.id;
    } else {
      await control('PATCH', `/api/servers/${id}`, common);
      const { tests } = await control<{
        tests: { id: string; mode: string; pinnedRevision: string | null; depth?: Depth }[];
      }>('GET', `/api/servers/${id}/tests`);
      // A test is its revision and depth: `newest` as a handshake and as a conformance test are two.
      const key = (t: { revision: string; depth: Depth }) => `${t.revision}/${t.depth}`;
      // The depth as the API gives it, else as the database has it (a control that does not show it).
      const conformance = new Set((await serverConformanceResults(await getDb(), id)).tests.map((t) => t.id));
      const have = tests.map((t) => ({
        id: t.id,
        key: key({
          revision: t.mode === 'newest' ? 'newest' : (t.pinnedRevision ?? ''),
          depth: t.depth ?? (conformance.has(t.id) ? 'conformance' : 'handshake'),
        }),
      }));
      const want = form.tests.map(testChoice);
      // Add first: a pinned test that does not pass today is refused before anything is retired.
      for (const choice of want)
        if (!have.some((t) => t.key === key(choice))) await control('POST', `/api/servers/${id}/tests`, asSent(choice));
      for (const t of have)
        if (!want.some((choice) => key(choice) === t.key)) await control('DELETE', `/api/tests/${t.id}`);
    }
  } catch (err) {
    return { ok: false, error: message(err) };
  }
  redirect(`/servers/${id}`);
}

/** A test as control's API takes it: a handshake as `{revision}` (the API's default depth), as before depths. */
function asSent(t: TestChoice): { revision: string; depth?: Depth } {
  return t.depth === 'handshake' ? { revision: t.revision } : t;
}

/**
 * A test as the browser sent it (a server action's argument is anyone's input): only the two
 * depths go on to control, whose API checks the revision and everything else again.
 */
function testChoice(t: TestChoice): TestChoice {
  return { revision: String(t.revision), depth: t.depth === 'conformance' ? 'conformance' : 'handshake' };
}

/**
 * The URL and headers to send: a masked URL part or a blank header value takes the stored one,
 * but only toward the stored URL's origin (store's kept-credentials, the rule control's API
 * follows too): a stored credential is never sent to a host it was not given for.
 */
async function resolveCredentials(
  submittedUrl: string,
  headers: HeaderInput[],
  serverId: string | undefined,
): Promise<{ url: string; headers: Record<string, string> }> {
  const server = serverId ? await getServer(await getDb(), serverId) : null;
  // A retired server is read-only: its stored credentials serve no detection or save any more.
  if (server?.retiredAt) throw new Error(`${server.name} is retired and read-only`);
  const url = keptUrl(server, submittedUrl.trim());
  const given: Record<string, string | null> = {};
  for (const h of headers) {
    const name = h.name.trim();
    if (name) given[name] = h.value !== '' ? h.value : null;
  }
  return { url, headers: keptHeaders(server, url, given).headers };
}

/**
 * A stdio server's fields as control's API takes them. An env value left blank when editing is sent
 * masked, which keeps the stored value there (values never come to the browser).
 */
function commandBody(c: CommandInput, editing: boolean) {
  const env: Record<string, string> = {};
  for (const e of c.env) {
    const name = String(e.name).trim();
    if (name) env[name] = e.value === '' && editing ? URL_MASK : String(e.value);
  }
  return {
    command: String(c.command).trim(),
    args: c.args.map(String),
    env,
    ...(String(c.cwd).trim() ? { cwd: String(c.cwd).trim() } : {}),
  };
}

function message(err: unknown): string {
  if (err instanceof ControlError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

// Reading a surface over one open connection: tools/list, resources/list, resources/templates/list
// and prompts/list, each only when the server declares the capability, each paged by nextCursor.
// A hostile answer (not an object, a huge string, duplicate names, a cursor that loops, an error)
// never throws out of here: the reader keeps what it could read and marks the surface truncated,
// so a later diff does not call what it could not read removed. Then the surface is fitted to
// SURFACE_MAX_CHARS (fit.ts) and every string made storable (no NUL, no lone surrogate: Postgres
// jsonb refuses both) and redacted (a server may echo the credentials it was sent).
import { BOUNDS, boundServerInfo, excerpt } from '../bounds';
import {
  type Connected,
  type Connection,
  connectLegacy,
  connectModern,
  connectNewestLegacy,
} from '../conformance/connection';
import { DEFAULT_TIMEOUT_MS, ProbeContext, type ProbeOptions } from '../context';
import type { Exchange } from '../exchange';
import { type Opening, type ServerInfo, serverInfoOf } from '../opening';
import { META } from '../openings/stateless';
import { redact, redactStrings } from '../redact';
import { CURRENT_REVISION, type Era, type Revision, revisionInfo } from '../revisions';
import { snapshotOf } from './canonical';
import { fitSurface, LIMITS, storableCapabilities, storableJson, storableText } from './fit';
import type { Surface, SurfacePrompt, SurfaceResource, SurfaceSnapshot, SurfaceTemplate, SurfaceTool } from './surface';

/** The most pages one list is read in: a catalogue longer than this is cut (truncated). */
export const SURFACE_MAX_PAGES = 10;

interface ListSpec {
  method: string;
  capability: string;
  field: string;
}

const LISTS = {
  tools: { method: 'tools/list', capability: 'tools', field: 'tools' },
  resources: { method: 'resources/list', capability: 'resources', field: 'resources' },
  resourceTemplates: { method: 'resources/templates/list', capability: 'resources', field: 'resourceTemplates' },
  prompts: { method: 'prompts/list', capability: 'prompts', field: 'prompts' },
} as const satisfies Record<string, ListSpec>;

/** A surface and what kept it from being whole, in words (empty when it is whole). */
export interface SurfaceReading {
  surface: Surface;
  notes: string[];
  /** The list requests this reading sent. */
  requests: number;
}

interface ListRead {
  items: unknown[];
  complete: boolean;
  note?: string;
}

function declares(capabilities: Record<string, unknown>, key: string): boolean {
  const v = capabilities[key];
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON-RPC answer's result, parsed whole from the text (Exchange.response keeps only its first levels). */
function resultIn(ex: Exchange): { result?: Record<string, unknown>; problem?: string } {
  if (ex.failure) return { problem: ex.error ?? ex.failure };
  const text = ex.answerText ?? ex.text;
  if (ex.truncated && ex.answerText === undefined) return { problem: 'the answer was larger than a probe reads' };
  if (ex.response && 'error' in ex.response) {
    return { problem: `JSON-RPC error ${ex.response.error.code}` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: ex.status === null ? 'no answer' : `HTTP ${ex.status}, no JSON-RPC answer` };
  }
  const result = typeof value === 'object' && value !== null ? (value as Record<string, unknown>).result : undefined;
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    return { problem: 'the answer has no result object' };
  }
  return { result: result as Record<string, unknown> };
}

async function readList(conn: Connection, spec: ListSpec): Promise<ListRead> {
  const items: unknown[] = [];
  const cursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < SURFACE_MAX_PAGES; page++) {
    if (conn.ctx.requestsLeft <= 0 || conn.ctx.remainingMs() <= 0) {
      return { items, complete: false, note: `${spec.method}: the read's budget ran out` };
    }
    let ex: Exchange;
    try {
      ex = await conn.call(spec.method, cursor === undefined ? {} : { cursor });
    } catch (err) {
      return { items, complete: false, note: `${spec.method}: ${(err as Error)?.message ?? err}` };
    }
    const { result, problem } = resultIn(ex);
    if (!result) return { items, complete: false, note: `${spec.method}: ${problem}` };
    const list = result[spec.field];
    if (!Array.isArray(list)) return { items, complete: false, note: `${spec.method}: no ${spec.field} list` };
    for (const item of list) {
      if (items.length >= LIMITS.items) {
        return { items, complete: false, note: `${spec.method}: more than ${LIMITS.items} items` };
      }
      items.push(item);
    }
    const next = result.nextCursor;
    if (next === undefined || next === null || next === '') return { items, complete: true };
    if (typeof next !== 'string' || next.length > LIMITS.cursor) {
      return { items, complete: false, note: `${spec.method}: a cursor that is not a short string` };
    }
    if (cursors.has(next)) return { items, complete: false, note: `${spec.method}: the cursor loops` };
    cursors.add(next);
    cursor = next;
  }
  return { items, complete: false, note: `${spec.method}: more than ${SURFACE_MAX_PAGES} pages` };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A text field, storable and within its bound; undefined when absent or not a string. */
function text(o: Record<string, unknown>, key: string, max: number, secrets: readonly string[]): string | undefined {
  const v = Object.hasOwn(o, key) ? o[key] : undefined;
  return typeof v === 'string' ? storableText(redact(v, secrets), max) : undefined;
}

function setText(out: Record<string, unknown>, o: Record<string, unknown>, keys: string[], secrets: readonly string[]) {
  for (const key of keys) {
    const v = text(o, key, key === 'description' ? LIMITS.description : LIMITS.name, secrets);
    if (v !== undefined) out[key] = v;
  }
}

function toolOf(v: unknown, secrets: readonly string[]): SurfaceTool | undefined {
  if (!isObject(v)) return undefined;
  const name = text(v, 'name', LIMITS.name, secrets);
  if (!name) return undefined;
  const tool: SurfaceTool = {
    name,
    inputSchema: Object.hasOwn(v, 'inputSchema') ? storableJson(v.inputSchema, secrets) : null,
  };
  setText(tool as unknown as Record<string, unknown>, v, ['title', 'description'], secrets);
  if (Object.hasOwn(v, 'outputSchema') && v.outputSchema !== undefined) {
    tool.outputSchema = storableJson(v.outputSchema, secrets);
  }
  if (isObject(v.annotations)) {
    tool.annotations = storableJson(v.annotations, secrets, LIMITS.annotations) as Record<string, unknown>;
  }
  return tool;
}

function resourceOf(v: unknown, secrets: readonly string[]): SurfaceResource | undefined {
  if (!isObject(v)) return undefined;
  const uri = text(v, 'uri', LIMITS.name, secrets);
  if (!uri) return undefined;
  const r: SurfaceResource = { uri, name: text(v, 'name', LIMITS.name, secrets) ?? '' };
  setText(r as unknown as Record<string, unknown>, v, ['title', 'description', 'mimeType'], secrets);
  return r;
}

function templateOf(v: unknown, secrets: readonly string[]): SurfaceTemplate | undefined {
  if (!isObject(v)) return undefined;
  const uriTemplate = text(v, 'uriTemplate', LIMITS.name, secrets);
  if (!uriTemplate) return undefined;
  const t: SurfaceTemplate = { uriTemplate, name: text(v, 'name', LIMITS.name, secrets) ?? '' };
  setText(t as unknown as Record<string, unknown>, v, ['title', 'description', 'mimeType'], secrets);
  return t;
}

function promptOf(v: unknown, secrets: readonly string[]): SurfacePrompt | undefined {
  if (!isObject(v)) return undefined;
  const name = text(v, 'name', LIMITS.name, secrets);
  if (!name) return undefined;
  const p: SurfacePrompt = { name };
  setText(p as unknown as Record<string, unknown>, v, ['title', 'description'], secrets);
  if (Array.isArray(v.arguments)) {
    const seen = new Set<string>();
    p.arguments = [];
    for (const a of v.arguments.slice(0, LIMITS.promptArguments)) {
      if (!isObject(a)) continue;
      const argName = text(a, 'name', LIMITS.name, secrets);
      if (!argName || seen.has(argName)) continue;
      seen.add(argName);
      const arg: NonNullable<SurfacePrompt['arguments']>[number] = { name: argName };
      const description = text(a, 'description', LIMITS.description, secrets);
      if (description !== undefined) arg.description = description;
      if (typeof a.required === 'boolean') arg.required = a.required;
      p.arguments.push(arg);
    }
  }
  return p;
}

const byKey =
  <T>(key: (t: T) => string) =>
  (a: T, b: T): number => {
    const ka = key(a);
    const kb = key(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  };

/** Items made storable, the first of each key kept (a server listing a name twice), sorted by key. */
function itemsOf<T>(
  read: ListRead,
  make: (v: unknown, secrets: readonly string[]) => T | undefined,
  key: (t: T) => string,
  secrets: readonly string[],
  notes: string[],
  what: string,
): T[] {
  const out = new Map<string, T>();
  let dropped = 0;
  for (const raw of read.items) {
    const item = make(raw, secrets);
    if (item === undefined) {
      dropped += 1;
      continue;
    }
    const k = key(item);
    if (out.has(k)) {
      dropped += 1;
      continue;
    }
    out.set(k, item);
  }
  if (dropped) notes.push(`${what}: ${dropped} listed item(s) unreadable or listed twice, left out`);
  return [...out.values()].sort(byKey(key));
}

function serverInfoFrom(conn: Connection, secrets: readonly string[]): ServerInfo | null {
  const result = conn.opening?.response && 'result' in conn.opening.response ? conn.opening.response.result : undefined;
  if (!result) return null;
  const raw =
    conn.era === 'modern' ? (isObject(result._meta) ? result._meta[META.serverInfo] : undefined) : result.serverInfo;
  const info = serverInfoOf(raw);
  if (!info) return null;
  const bounded = boundServerInfo(redactStrings(info, secrets));
  const out: ServerInfo = {
    name: storableText(bounded.name, LIMITS.name),
    version: storableText(bounded.version, LIMITS.name),
  };
  if (bounded.title !== undefined) out.title = storableText(bounded.title, LIMITS.name);
  return out;
}

/**
 * Everything the server offers in this connection's era, with the reasons it is not whole. Never
 * throws for anything the server does; the connection stays open (the caller closes it).
 */
export async function readSurfaceNoted(conn: Connection, negotiated?: string): Promise<SurfaceReading> {
  const secrets = conn.ctx.secrets;
  const before = conn.ctx.requests;
  const notes: string[] = [];
  const caps = conn.capabilities ?? {};
  const read = async (key: keyof typeof LISTS): Promise<ListRead> => {
    const spec = LISTS[key];
    if (!declares(caps, spec.capability)) return { items: [], complete: true };
    const r = await readList(conn, spec);
    if (r.note) notes.push(r.note);
    return r;
  };
  const tools = await read('tools');
  const resources = await read('resources');
  const templates = await read('resourceTemplates');
  const prompts = await read('prompts');
  const surface: Surface = {
    era: conn.era,
    revision: storableText(negotiated ?? (conn as { answered?: string }).answered ?? conn.revision, 64),
    serverInfo: serverInfoFrom(conn, secrets),
    capabilities: storableCapabilities(caps, secrets),
    tools: itemsOf(tools, toolOf, (t) => t.name, secrets, notes, 'tools'),
    resources: itemsOf(resources, resourceOf, (r) => r.uri, secrets, notes, 'resources'),
    resourceTemplates: itemsOf(templates, templateOf, (t) => t.uriTemplate, secrets, notes, 'resource templates'),
    prompts: itemsOf(prompts, promptOf, (p) => p.name, secrets, notes, 'prompts'),
    truncated: ![tools, resources, templates, prompts].every((r) => r.complete),
  };
  const fitted = fitSurface(surface);
  if (fitted.cut) notes.push(`cut to fit a snapshot: ${fitted.cut}`);
  return { surface: fitted.surface, notes, requests: conn.ctx.requests - before };
}

/** Everything the server offers in this connection's era, bounded and sorted; never throws for the server's answers. */
export async function readSurface(conn: Connection): Promise<Surface> {
  return (await readSurfaceNoted(conn)).surface;
}

/** The requests one surface read may send: its opening, SURFACE_MAX_PAGES of each list, the close. */
export const SURFACE_READ_MAX_REQUESTS = 4 + 4 * SURFACE_MAX_PAGES;
/** The longest one surface read may take. */
export const SURFACE_READ_MAX_MS = 30_000;

/** One era's read: its snapshot, or why there is none. */
export interface SurfaceRead {
  era: Era;
  /** The revision the connection negotiated (null when none opened). */
  revision: string | null;
  snapshot: SurfaceSnapshot | null;
  /** What was read ("5 tools, 1 resource…"), what kept it from being whole, or why nothing was read. */
  message: string;
  requests: number;
}

export function surfaceContext(url: string | URL, opts: ProbeOptions): ProbeContext {
  return new ProbeContext(new URL(url), opts, {
    maxRequests: SURFACE_READ_MAX_REQUESTS,
    totalMs: SURFACE_READ_MAX_MS,
    perRequestMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
}

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function describeSurface(s: Surface): string {
  return [
    count(s.tools.length, 'tool'),
    count(s.resources.length, 'resource'),
    count(s.resourceTemplates.length, 'resource template'),
    count(s.prompts.length, 'prompt'),
  ].join(', ');
}

/** Why an opening failed, redacted and cut, as a read's message says it. */
export function openingFailure(opening: Opening, secrets: readonly string[]): string {
  const failure = opening.failure ?? { outcome: 'protocol_error', message: 'the opening failed' };
  return excerpt(failure.message, secrets, BOUNDS.message);
}

/** A connection the caller pinned answered with another revision: not the one asked for. */
export function pinnedMismatch(requested: Revision, answered: string | undefined): string | undefined {
  if (answered === undefined || answered === requested) return undefined;
  return `Server does not speak protocol ${requested} (it answered ${excerpt(answered, [], 40)})`;
}

/** Open a connection in `revision` (pinned: another answered revision is a failure). */
export async function connectAt(ctx: ProbeContext, revision: Revision): Promise<Connected> {
  const connected =
    revisionInfo(revision).generation === 'stateless'
      ? await connectModern(ctx, revision)
      : await connectLegacy(ctx, revision);
  if (!connected.ok) return connected;
  const mismatch = pinnedMismatch(revision, connected.opening.answered);
  if (!mismatch) return connected;
  await connected.connection.close();
  return {
    ok: false,
    opening: { ...connected.opening, ok: false, failure: { outcome: 'unsupported_version', message: mismatch } },
  };
}

/** Read the surface over an opened connection (or say why it did not open), and close it. */
export async function readConnected(ctx: ProbeContext, era: Era, connected: Connected): Promise<SurfaceRead> {
  if (!connected.ok) {
    return {
      era,
      revision: null,
      snapshot: null,
      message: openingFailure(connected.opening, ctx.secrets),
      requests: ctx.requests,
    };
  }
  const conn = connected.connection;
  const negotiated = connected.opening.answered ?? conn.revision;
  try {
    const reading = await readSurfaceNoted(conn, negotiated);
    const snapshot = snapshotOf(reading.surface);
    const notes = reading.notes.length ? ` (${reading.notes.join('; ')})` : '';
    return {
      era: conn.era,
      revision: reading.surface.revision,
      snapshot,
      message: excerpt(`${describeSurface(reading.surface)}${notes}`, ctx.secrets, BOUNDS.message),
      requests: ctx.requests,
    };
  } catch (err) {
    // Our fault, never the server's: say so rather than throw out of a probe.
    const message = `the surface could not be read inside mcp-fleet (${(err as Error)?.message ?? err})`;
    return {
      era: conn.era,
      revision: negotiated,
      snapshot: null,
      message: excerpt(message, ctx.secrets, BOUNDS.message),
      requests: ctx.requests,
    };
  } finally {
    await conn.close().catch(() => undefined);
  }
}

/** The surface a server offers in one pinned revision: connect, read, close. */
export async function readSurfaceAt(
  url: string | URL,
  revision: Revision,
  opts: ProbeOptions = {},
): Promise<SurfaceRead> {
  const ctx = surfaceContext(url, opts);
  const read = await readConnected(ctx, revisionInfo(revision).era, await connectAt(ctx, revision));
  return { ...read, requests: ctx.requests };
}

/**
 * The surface of each era: the newest legacy revision the server speaks (sessions, then HTTP+SSE)
 * and 2026-07-28. Each era has its own budget. An era the server does not speak has a read with no
 * snapshot and the opening's failure as its message.
 */
export async function readSurfaces(url: string | URL, opts: ProbeOptions = {}): Promise<SurfaceRead[]> {
  const legacyCtx = surfaceContext(url, opts);
  const legacy = await readConnected(legacyCtx, 'legacy', await connectNewestLegacy(legacyCtx));
  const modernCtx = surfaceContext(url, opts);
  const modern = await readConnected(modernCtx, 'modern', await connectModern(modernCtx, CURRENT_REVISION));
  return [
    { ...legacy, requests: legacyCtx.requests },
    { ...modern, requests: modernCtx.requests },
  ];
}

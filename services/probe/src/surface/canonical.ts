// The canonical form of a surface: one JSON text per surface, so equal surfaces hash equal and a
// snapshot is stored once (content-addressed). Keys sorted, no spaces, and every character outside
// printable ASCII \u-escaped, so the body passes the bus's SurfaceSnapshotSchema pattern and is the
// same bytes in every encoding. Hand-written rather than RFC 8785 (`canonicalize`): that form keeps
// non-ASCII characters as UTF-8, which the bus pattern refuses.
//
// surfaceFromBody reads a body back. A body arrives over the bus from an agent and out of the
// database, so it is hostile until checked: bounded in size and depth, every field of the right type,
// no inherited keys (`__proto__` stays a plain own key of a null-prototype object).
import { createHash } from 'node:crypto';
import {
  SURFACE_MAX_CHARS,
  type Surface,
  type SurfacePrompt,
  type SurfacePromptArgument,
  type SurfaceResource,
  type SurfaceSnapshot,
  type SurfaceTemplate,
  type SurfaceTool,
} from './surface';

/** How deep a canonical value may nest; deeper (or cyclic) values are refused, not recursed into forever. */
export const CANONICAL_MAX_DEPTH = 64;

// Characters JSON.stringify leaves as they are but the bus pattern refuses: DEL and everything past ASCII.
// (Control characters below 0x20 and lone surrogates are escaped by JSON.stringify already.)
const NOT_PRINTABLE_ASCII = /[\u007f-\uffff]/g;
const escapeChar = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

function encode(value: unknown, depth: number): string | undefined {
  if (depth > CANONICAL_MAX_DEPTH) throw new RangeError(`canonical JSON: nested deeper than ${CANONICAL_MAX_DEPTH}`);
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      // undefined, functions, symbols: absent, as JSON.stringify has them; bigint has no JSON form.
      if (typeof value === 'bigint') throw new TypeError('canonical JSON: a bigint has no JSON form');
      return undefined;
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => encode(item, depth + 1) ?? 'null').join(',')}]`;
  }
  const keys = Object.keys(value).sort();
  const parts: string[] = [];
  for (const key of keys) {
    const encoded = encode((value as Record<string, unknown>)[key], depth + 1);
    if (encoded !== undefined) parts.push(`${JSON.stringify(key)}:${encoded}`);
  }
  return `{${parts.join(',')}}`;
}

/** JSON with keys sorted, no spaces, and only printable ASCII (everything else \u-escaped). */
export function canonicalJson(value: unknown): string {
  const text = encode(value, 0) ?? 'null';
  return text.replace(NOT_PRINTABLE_ASCII, escapeChar);
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * A surface as it travels and is stored. The surface must already be within its bounds (readSurface
 * fits it): a body over SURFACE_MAX_CHARS is refused here rather than dropped by the bus later.
 */
export function snapshotOf(surface: Surface): SurfaceSnapshot {
  const body = canonicalJson(surface);
  if (body.length > SURFACE_MAX_CHARS) {
    throw new RangeError(`surface snapshot: ${body.length} characters, more than ${SURFACE_MAX_CHARS}`);
  }
  return { era: surface.era, revision: surface.revision, hash: sha256Hex(body), body, truncated: surface.truncated };
}

/** A body that is not a surface: the message says which field. */
export class SurfaceBodyError extends Error {
  constructor(message: string) {
    super(`surface body: ${message}`);
    this.name = 'SurfaceBodyError';
  }
}

/** The most items a list of a stored surface may hold (a canonical body of 90k characters holds fewer). */
const MAX_ITEMS = 10_000;
const MAX_STRING = SURFACE_MAX_CHARS;

type Json = Record<string, unknown>;

function isPlainObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// JSON.parse gives `__proto__` as an own key, harmless there; a copy made with assignment would set
// the prototype. Copies of free-form JSON (schemas, annotations, capabilities) go into
// null-prototype objects with defineProperty, so no key of the body ever reaches a prototype.
function copyJson(value: unknown, path: string, depth: number): unknown {
  if (depth > CANONICAL_MAX_DEPTH) throw new SurfaceBodyError(`${path} is nested deeper than ${CANONICAL_MAX_DEPTH}`);
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new SurfaceBodyError(`${path} is not a finite number`);
    return value;
  }
  if (typeof value === 'string') {
    if (value.length > MAX_STRING) throw new SurfaceBodyError(`${path} is too long`);
    return value;
  }
  if (Array.isArray(value)) {
    if (value.length > MAX_ITEMS) throw new SurfaceBodyError(`${path} has more than ${MAX_ITEMS} items`);
    return value.map((item, i) => copyJson(item, `${path}[${i}]`, depth + 1));
  }
  if (isPlainObject(value)) {
    const out = Object.create(null) as Json;
    for (const key of Object.keys(value)) {
      Object.defineProperty(out, key, {
        value: copyJson(value[key], `${path}.${key}`, depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  throw new SurfaceBodyError(`${path} is not JSON`);
}

function field(obj: Json, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

function str(obj: Json, key: string, path: string): string {
  const v = field(obj, key);
  if (typeof v !== 'string') throw new SurfaceBodyError(`${path}.${key} must be a string`);
  if (v.length > MAX_STRING) throw new SurfaceBodyError(`${path}.${key} is too long`);
  return v;
}

function optStr(obj: Json, key: string, path: string): string | undefined {
  return field(obj, key) === undefined ? undefined : str(obj, key, path);
}

function bool(obj: Json, key: string, path: string): boolean {
  const v = field(obj, key);
  if (typeof v !== 'boolean') throw new SurfaceBodyError(`${path}.${key} must be true or false`);
  return v;
}

function obj(value: unknown, path: string): Json {
  if (!isPlainObject(value)) throw new SurfaceBodyError(`${path} must be an object`);
  return value;
}

function list<T>(o: Json, key: string, path: string, item: (v: unknown, p: string) => T): T[] {
  const v = field(o, key);
  if (!Array.isArray(v)) throw new SurfaceBodyError(`${path}.${key} must be a list`);
  if (v.length > MAX_ITEMS) throw new SurfaceBodyError(`${path}.${key} has more than ${MAX_ITEMS} items`);
  return v.map((x, i) => item(x, `${path}.${key}[${i}]`));
}

/** Sets the optional keys that are present, leaving absent ones absent (so a round trip is exact). */
function withOptional<T extends object>(base: T, extra: Record<string, unknown>): T {
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) (base as Record<string, unknown>)[k] = v;
  return base;
}

function tool(value: unknown, path: string): SurfaceTool {
  const o = obj(value, path);
  if (!Object.hasOwn(o, 'inputSchema')) throw new SurfaceBodyError(`${path}.inputSchema is missing`);
  const annotations = field(o, 'annotations');
  return withOptional<SurfaceTool>(
    { name: str(o, 'name', path), inputSchema: copyJson(o.inputSchema, `${path}.inputSchema`, 0) },
    {
      title: optStr(o, 'title', path),
      description: optStr(o, 'description', path),
      outputSchema:
        field(o, 'outputSchema') === undefined ? undefined : copyJson(o.outputSchema, `${path}.outputSchema`, 0),
      annotations:
        annotations === undefined
          ? undefined
          : (copyJson(obj(annotations, `${path}.annotations`), `${path}.annotations`, 0) as Record<string, unknown>),
    },
  );
}

function resource(value: unknown, path: string): SurfaceResource {
  const o = obj(value, path);
  return withOptional<SurfaceResource>(
    { uri: str(o, 'uri', path), name: str(o, 'name', path) },
    {
      title: optStr(o, 'title', path),
      description: optStr(o, 'description', path),
      mimeType: optStr(o, 'mimeType', path),
    },
  );
}

function template(value: unknown, path: string): SurfaceTemplate {
  const o = obj(value, path);
  return withOptional<SurfaceTemplate>(
    { uriTemplate: str(o, 'uriTemplate', path), name: str(o, 'name', path) },
    {
      title: optStr(o, 'title', path),
      description: optStr(o, 'description', path),
      mimeType: optStr(o, 'mimeType', path),
    },
  );
}

function promptArgument(value: unknown, path: string): SurfacePromptArgument {
  const o = obj(value, path);
  return withOptional<SurfacePromptArgument>(
    { name: str(o, 'name', path) },
    {
      description: optStr(o, 'description', path),
      required: field(o, 'required') === undefined ? undefined : bool(o, 'required', path),
    },
  );
}

function prompt(value: unknown, path: string): SurfacePrompt {
  const o = obj(value, path);
  return withOptional<SurfacePrompt>(
    { name: str(o, 'name', path) },
    {
      title: optStr(o, 'title', path),
      description: optStr(o, 'description', path),
      arguments: field(o, 'arguments') === undefined ? undefined : list(o, 'arguments', path, promptArgument),
    },
  );
}

/**
 * A surface read back from a snapshot body (a string, or its parsed JSON). Throws SurfaceBodyError,
 * naming the field, for anything that is not a surface; never returns objects with inherited keys.
 */
export function surfaceFromBody(body: string | unknown): Surface {
  let value: unknown = body;
  if (typeof body === 'string') {
    if (body.length > SURFACE_MAX_CHARS) {
      throw new SurfaceBodyError(`${body.length} characters, more than ${SURFACE_MAX_CHARS}`);
    }
    try {
      value = JSON.parse(body);
    } catch {
      throw new SurfaceBodyError('not JSON');
    }
  }
  const o = obj(value, 'surface');
  const era = field(o, 'era');
  if (era !== 'legacy' && era !== 'modern') throw new SurfaceBodyError('surface.era must be legacy or modern');
  const revision = str(o, 'revision', 'surface');
  if (revision.length > 64) throw new SurfaceBodyError('surface.revision is too long');
  let serverInfo: Surface['serverInfo'] = null;
  const info = field(o, 'serverInfo');
  if (info !== null && info !== undefined) {
    const i = obj(info, 'surface.serverInfo');
    serverInfo = withOptional(
      { name: str(i, 'name', 'surface.serverInfo'), version: str(i, 'version', 'surface.serverInfo') },
      { title: optStr(i, 'title', 'surface.serverInfo') },
    );
  }
  const capabilities = copyJson(obj(field(o, 'capabilities'), 'surface.capabilities'), 'surface.capabilities', 0);
  return {
    era,
    revision,
    serverInfo,
    capabilities: capabilities as Record<string, unknown>,
    tools: list(o, 'tools', 'surface', tool),
    resources: list(o, 'resources', 'surface', resource),
    resourceTemplates: list(o, 'resourceTemplates', 'surface', template),
    prompts: list(o, 'prompts', 'surface', prompt),
    truncated: bool(o, 'truncated', 'surface'),
  };
}

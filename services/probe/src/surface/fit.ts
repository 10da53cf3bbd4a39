// How a surface is made storable and cut to fit a snapshot (SURFACE_MAX_CHARS), and the marks a cut
// leaves, so a diff can tell "the server changed this" from "the reader cut this".
//
// Two stages. While reading, every value the server sent is copied within fixed bounds (LIMITS):
// strings without NUL or lone surrogates (Postgres jsonb refuses both), redacted, cut; JSON nested
// at most LIMITS.jsonDepth deep. Then, if the canonical body is still over SURFACE_MAX_CHARS,
// fitSurface cuts in the order that loses least: long descriptions first, then the largest schemas
// (replaced by a mark), then the last items by key of the largest list.
import { CUT_MARK, cut } from '../bounds';
import { redact } from '../redact';
import { canonicalJson } from './canonical';
import { SURFACE_MAX_CHARS, type Surface } from './surface';

/**
 * A schema too large to keep is replaced by `{ [SCHEMA_CUT_KEY]: <its canonical length> }`; a diff
 * does not compare inside a cut schema.
 */
export const SCHEMA_CUT_KEY = 'x-mcp-fleet-cut';

/** The fixed bounds of a read, before fitting. */
export const LIMITS = {
  /** Items of one list (tools, resources…), over all its pages. */
  items: 2000,
  /** A pagination cursor's length. */
  cursor: 1024,
  /** A name, uri, title, MIME type. */
  name: 256,
  description: 4000,
  promptArguments: 64,
  /** A tool's annotations, as canonical JSON. */
  annotations: 2000,
  /** One capability's value, as canonical JSON. */
  capability: 1000,
  capabilities: 64,
  /** One schema, as canonical JSON. */
  schema: 30_000,
  jsonDepth: 32,
  jsonString: 4000,
  jsonArray: 500,
  jsonKeys: 500,
} as const;

/** What fitSurface cuts descriptions to when a surface is over its bound. */
const FITTED_DESCRIPTION = 200;
/** The schema sizes fitSurface cuts above, in turn, until the surface fits. */
const SCHEMA_STEPS = [8000, 2000, 500];

export function isCutSchema(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && Object.hasOwn(schema, SCHEMA_CUT_KEY);
}

const cutMarkOf = (length: number): Record<string, unknown> => ({ [SCHEMA_CUT_KEY]: length });

/** A text that ends in the cut mark was cut by the reader: only its kept beginning is known. */
export function isCutText(text: string | undefined): boolean {
  return text?.endsWith(CUT_MARK) === true;
}

/**
 * Whether two texts, either of which may have been cut, can be the same text: equal, or equal over
 * the beginning that both kept.
 */
export function sameText(a: string | undefined, b: string | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  const aCut = isCutText(a);
  const bCut = isCutText(b);
  if (!aCut && !bCut) return false;
  const keep = (t: string, isCut: boolean) => (isCut ? t.slice(0, t.length - CUT_MARK.length) : t);
  const ka = keep(a, aCut);
  const kb = keep(b, bCut);
  // A whole text must begin with the kept part of a cut one; two cut ones agree over the shorter.
  if (!bCut) return kb.startsWith(ka);
  if (!aCut) return ka.startsWith(kb);
  const n = Math.min(ka.length, kb.length);
  return ka.slice(0, n) === kb.slice(0, n);
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
// NUL, built from its code: a control character in a regex literal reads as a mistake.
const NUL = new RegExp(String.fromCharCode(0), 'g');

/** A server's text as a snapshot can hold it: no NUL, no lone surrogate, at most `max` long. */
export function storableText(text: string, max: number): string {
  // Cut first (bounded work on a huge string), then clean: replacing keeps the length.
  return cut(text.length > max ? text.slice(0, max + 1) : text, max)
    .replace(NUL, '\ufffd')
    .replace(LONE_SURROGATE, '\ufffd');
}

function copy(value: unknown, depth: number, secrets: readonly string[]): unknown {
  if (value === null || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string') return storableText(redact(value, secrets), LIMITS.jsonString);
  if (typeof value !== 'object') return null;
  if (depth >= LIMITS.jsonDepth) return cutMarkOf(-1);
  if (Array.isArray(value)) return value.slice(0, LIMITS.jsonArray).map((v) => copy(v, depth + 1, secrets));
  const entries: [string, unknown][] = [];
  for (const key of Object.keys(value)) {
    if (entries.length >= LIMITS.jsonKeys) break;
    entries.push([
      storableText(redact(key, secrets), LIMITS.name),
      copy((value as Record<string, unknown>)[key], depth + 1, secrets),
    ]);
  }
  // fromEntries defines properties, so a `__proto__` key stays data.
  return Object.fromEntries(entries);
}

/**
 * Free-form JSON a server sent (a schema, annotations, a capability), copied within LIMITS, its
 * strings redacted; replaced by the cut mark when its canonical form is longer than `max`.
 */
export function storableJson(value: unknown, secrets: readonly string[] = [], max: number = LIMITS.schema): unknown {
  const copied = copy(value, 0, secrets);
  const length = canonicalJson(copied).length;
  return length > max ? cutMarkOf(length) : copied;
}

/** Capabilities kept key by key (a huge one is marked, the others stay comparable). */
export function storableCapabilities(
  caps: Record<string, unknown>,
  secrets: readonly string[],
): Record<string, unknown> {
  const entries = Object.keys(caps)
    .slice(0, LIMITS.capabilities)
    .map(
      (k) =>
        [storableText(redact(k, secrets), LIMITS.name), storableJson(caps[k], secrets, LIMITS.capability)] as const,
    );
  return Object.fromEntries(entries);
}

type Described = { description?: string };

function* describedItems(s: Surface): Generator<Described> {
  yield* s.tools;
  yield* s.resources;
  yield* s.resourceTemplates;
  for (const p of s.prompts) {
    yield p;
    yield* p.arguments ?? [];
  }
}

const size = (value: unknown): number => canonicalJson(value).length;

/**
 * The surface within SURFACE_MAX_CHARS as canonical JSON, and what was cut to get there (undefined
 * when nothing was). A cut surface is marked truncated. Works on a copy; the input is not changed.
 */
export function fitSurface(input: Surface): { surface: Surface; cut: string | undefined } {
  if (size(input) <= SURFACE_MAX_CHARS) return { surface: input, cut: undefined };
  const s: Surface = structuredClone(input);
  s.truncated = true;
  const cuts: string[] = [];

  let described = 0;
  for (const item of describedItems(s)) {
    if (item.description !== undefined && item.description.length > FITTED_DESCRIPTION) {
      item.description = cut(item.description, FITTED_DESCRIPTION);
      described += 1;
    }
  }
  if (described) cuts.push(`${described} descriptions`);
  if (size(s) <= SURFACE_MAX_CHARS) return { surface: s, cut: cuts.join(', ') };

  let schemas = 0;
  for (const step of SCHEMA_STEPS) {
    for (const tool of s.tools) {
      for (const key of ['inputSchema', 'outputSchema'] as const) {
        const schema = tool[key];
        if (schema === undefined || isCutSchema(schema)) continue;
        const length = size(schema);
        if (length > step) {
          tool[key] = cutMarkOf(length);
          schemas += 1;
        }
      }
    }
    if (size(s) <= SURFACE_MAX_CHARS) {
      cuts.push(`${schemas} schemas`);
      return { surface: s, cut: cuts.join(', ') };
    }
  }
  if (schemas) cuts.push(`${schemas} schemas`);

  // Drop the last items by key of the largest list until the body fits; sizes are measured once.
  const lists = [s.tools, s.resources, s.resourceTemplates, s.prompts] as unknown[][];
  const sizes = lists.map((list) => list.map((item) => size(item) + 1));
  const totals = sizes.map((list) => list.reduce((a, b) => a + b, 0));
  let total = size(s);
  let dropped = 0;
  while (total > SURFACE_MAX_CHARS) {
    const largest = totals.indexOf(Math.max(...totals));
    const list = lists[largest]!;
    if (list.length === 0) break;
    list.pop();
    const itemSize = sizes[largest]!.pop()!;
    totals[largest]! -= itemSize;
    total -= itemSize;
    dropped += 1;
  }
  cuts.push(`${dropped} items`);
  // The running total is an estimate (commas); measure once more and drop more if it is still over.
  while (size(s) > SURFACE_MAX_CHARS) {
    const list = lists.reduce((a, b) => (b.length > a.length ? b : a));
    if (list.length === 0) break;
    list.pop();
  }
  return { surface: s, cut: cuts.join(', ') };
}

// How the server page reads a surface: one view per era (or per region when the regions disagree),
// a tool's parameters from its JSON Schema, the item a change names in a blob, and the pretty JSON
// the diff view compares. Everything here came from a probed server (hostile): only strings out,
// cut to a bound, for React to render as text.
import type { Surface, SurfaceTool } from '@mcp-fleet/probe';
import type { SurfaceNow } from '@mcp-fleet/store';

/** The longest name, description or value a row shows; the rest is cut with a mark. */
export const TEXT_CHARS = 300;
/** The longest JSON (a schema, capabilities) one block shows. */
export const JSON_CHARS = 20_000;

/** At most `max` characters, cut with a visible mark. */
export function cut(text: unknown, max = TEXT_CHARS): string {
  const s = typeof text === 'string' ? text : text === undefined || text === null ? '' : String(text);
  return s.length > max ? `${s.slice(0, max)}… (${s.length - max} more characters cut)` : s;
}

/** One surface shown for an era: the regions that read exactly it. */
export interface EraSurface {
  era: string;
  regions: string[];
  head: SurfaceNow;
}

/** Per era, one view when every region read the same content, else one per distinct content. */
export function surfacesByEra(heads: SurfaceNow[]): { era: string; split: boolean; views: EraSurface[] }[] {
  const eras = new Map<string, Map<string, EraSurface>>();
  for (const h of heads) {
    const byHash = eras.get(h.era) ?? new Map<string, EraSurface>();
    const view = byHash.get(h.hash);
    if (view) view.regions.push(h.region);
    else byHash.set(h.hash, { era: h.era, regions: [h.region], head: h });
    eras.set(h.era, byHash);
  }
  return [...eras.entries()]
    .map(([era, byHash]) => ({ era, split: byHash.size > 1, views: [...byHash.values()] }))
    .sort((a, b) => (a.era === b.era ? 0 : a.era === 'modern' ? -1 : 1));
}

export interface Parameter {
  name: string;
  type: string;
  required: boolean;
  description: string;
}

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** The most parameters a tool's row lists (its schema, in full, is one click away). */
export const MAX_PARAMETERS = 50;

/** A tool's top-level parameters from its input schema: name, type, required. */
export function parametersOf(tool: SurfaceTool): Parameter[] {
  const schema = record(tool.inputSchema);
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === 'string') : []);
  return Object.entries(record(schema.properties))
    .slice(0, MAX_PARAMETERS)
    .map(([name, p]): Parameter => {
      const prop = record(p);
      const type = Array.isArray(prop.type)
        ? prop.type.map(String).join(' | ')
        : typeof prop.type === 'string'
          ? prop.type
          : Array.isArray(prop.enum)
            ? 'enum'
            : '';
      const values = Array.isArray(prop.enum) ? ` (${prop.enum.slice(0, 10).map(String).join(', ')})` : '';
      return {
        name: cut(name, 80),
        type: cut(`${type}${values}`, 120),
        required: required.has(name),
        description: cut(prop.description),
      };
    })
    .sort((a, b) => Number(b.required) - Number(a.required) || a.name.localeCompare(b.name));
}

/** Annotations as name=value pairs (readOnlyHint, destructiveHint…), bounded. */
export function annotationsOf(tool: SurfaceTool): { name: string; value: string }[] {
  return Object.entries(record(tool.annotations))
    .sort(([a], [b]) => a.localeCompare(b))
    .slice(0, 20)
    .map(([name, value]) => ({
      name: cut(name, 60),
      value: cut(typeof value === 'string' ? value : JSON.stringify(value), 80),
    }));
}

/** Bounds of a value shown as JSON: each string, each list, each object, the depth. */
const JSON_BOUNDS = { string: 2_000, items: 500, depth: 24 };

/**
 * A value with keys sorted at every level (jsonb reorders them) and every string, list, object and
 * depth cut to a bound, each cut marked in place: a huge value stays its shape, so a diff still
 * finds the change beside it.
 */
export function bounded(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return cut(v, JSON_BOUNDS.string);
  if (v === null || typeof v !== 'object') return v;
  if (depth >= JSON_BOUNDS.depth) return '… (nested deeper than shown)';
  if (Array.isArray(v)) {
    const items = v.slice(0, JSON_BOUNDS.items).map((x) => bounded(x, depth + 1));
    return v.length > JSON_BOUNDS.items ? [...items, `… (${v.length - JSON_BOUNDS.items} more items)`] : items;
  }
  const keys = Object.keys(v).sort();
  const out: Record<string, unknown> = {};
  for (const k of keys.slice(0, JSON_BOUNDS.items))
    out[cut(k, JSON_BOUNDS.string)] = bounded((v as Record<string, unknown>)[k], depth + 1);
  if (keys.length > JSON_BOUNDS.items) out['…'] = `${keys.length - JSON_BOUNDS.items} more keys`;
  return out;
}

/** Bounded, key-sorted JSON with two-space indents: what the schema blocks show and the diff compares. */
export function prettyJson(value: unknown): string {
  return JSON.stringify(bounded(value), null, 2) ?? 'null';
}

/** Bounded pretty JSON for a block. */
export function jsonBlock(value: unknown, max = JSON_CHARS): string {
  return cut(prettyJson(value), max);
}

/** The item a change names in one surface (its definition as the server sent it), or undefined. */
export function itemOf(surface: Surface | null, kind: string, name: string): unknown {
  if (!surface) return undefined;
  switch (kind) {
    case 'tool':
      return surface.tools.find((t) => t.name === name);
    case 'prompt':
      return surface.prompts.find((p) => p.name === name);
    case 'resource':
      return surface.resources.find((r) => r.uri === name);
    case 'resource_template':
      return surface.resourceTemplates.find((t) => t.uriTemplate === name);
    case 'capability':
      return name in surface.capabilities ? { [name]: surface.capabilities[name] } : undefined;
    case 'server_info':
      return surface.serverInfo ?? undefined;
    default:
      return undefined;
  }
}

export const SEVERITY_CLASS: Record<string, string> = { breaking: 'fail', warning: 'warn', info: 'ok' };

// Two snapshots of one era, diffed into classified changes (issue 16):
//   breaking — a tool, prompt, resource, resource template or capability removed; a required parameter
//              added (a new required property, or an optional one made required); a parameter's type
//              narrowed or changed; enum values removed; an output field removed;
//   warning  — a description, title or annotation changed; an optional parameter removed; prompt
//              argument changes that do not break;
//   info     — something added (tool, optional parameter, enum value, output field, resource,
//              prompt, capability); the server's version changed.
// Pure and bounded: nested schemas are followed SCHEMA_MAX_DEPTH levels deep, and items beyond a
// truncated surface's cut are neither removed nor added.
import { canonicalJson } from './canonical';
import { isCutSchema, sameText } from './fit';
import type {
  Surface,
  SurfaceChange,
  SurfaceKind,
  SurfacePrompt,
  SurfaceResource,
  SurfaceSeverity,
  SurfaceTemplate,
  SurfaceTool,
} from './surface';

/** How many levels of nested object properties (and array items) a schema diff follows. */
export const SCHEMA_MAX_DEPTH = 6;
/** The longest name quoted in a change's message (a server chooses its names). */
const NAME_IN_MESSAGE = 120;

type Json = Record<string, unknown>;

const quote = (name: string): string =>
  `\`${name.length > NAME_IN_MESSAGE ? `${name.slice(0, NAME_IN_MESSAGE - 1)}…` : name}\``;

const show = (value: unknown): string => {
  if (value === undefined) return 'absent';
  const text = canonicalJson(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
};

const KIND_WORD: Record<SurfaceKind, string> = {
  tool: 'tool',
  resource: 'resource',
  resource_template: 'resource template',
  prompt: 'prompt',
  capability: 'capability',
  server_info: 'server',
};

class Changes {
  readonly list: SurfaceChange[] = [];
  add(severity: SurfaceSeverity, kind: SurfaceKind, name: string, change: string, what: string, path?: string): void {
    const item = kind === 'server_info' ? KIND_WORD[kind] : `${KIND_WORD[kind]} ${quote(name)}`;
    const c: SurfaceChange = { severity, kind, name, change, message: `${item}${what}` };
    if (path !== undefined) c.path = path;
    this.list.push(c);
  }
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const own = (o: Json, key: string): unknown => (Object.hasOwn(o, key) ? o[key] : undefined);

/**
 * Pairs two lists sorted by key. An item only in `before` is removed unless `after` was truncated and
 * the item sorts beyond after's last key (the cut); likewise for additions when `before` was truncated.
 */
function pair<T>(
  before: readonly T[],
  after: readonly T[],
  key: (t: T) => string,
  truncated: { before: boolean; after: boolean },
  on: { removed: (t: T) => void; added: (t: T) => void; both: (b: T, a: T) => void },
): void {
  const afterByKey = new Map(after.map((t) => [key(t), t]));
  const beforeByKey = new Map(before.map((t) => [key(t), t]));
  const lastAfter = after.length ? key(after[after.length - 1]!) : undefined;
  const lastBefore = before.length ? key(before[before.length - 1]!) : undefined;
  const beyond = (k: string, last: string | undefined) => last === undefined || k > last;
  for (const [k, b] of beforeByKey) {
    const a = afterByKey.get(k);
    if (a !== undefined) on.both(b, a);
    else if (!(truncated.after && beyond(k, lastAfter))) on.removed(b);
  }
  for (const [k, a] of afterByKey) {
    if (beforeByKey.has(k)) continue;
    if (!(truncated.before && beyond(k, lastBefore))) on.added(a);
  }
}

function texts(
  out: Changes,
  kind: SurfaceKind,
  name: string,
  before: Json,
  after: Json,
  fields: readonly string[],
  prefix = '',
): void {
  for (const f of fields) {
    const b = own(before, f);
    const a = own(after, f);
    if (typeof b !== 'string' && b !== undefined) continue;
    if (typeof a !== 'string' && a !== undefined) continue;
    if (sameText(b, a)) continue;
    const label = f === 'mimeType' ? 'MIME type' : f;
    const what = b === undefined ? `${label} added` : a === undefined ? `${label} removed` : `${label} changed`;
    out.add('warning', kind, name, `${f === 'mimeType' ? 'mime_type' : f}_changed`, `: ${prefix}${what}`);
  }
}

// --- JSON Schema types -------------------------------------------------------------------------

const ALL_TYPES = ['array', 'boolean', 'integer', 'null', 'number', 'object', 'string'] as const;

/** The JSON types a schema accepts, from its `type` (absent or unreadable: any). */
function typesOf(schema: Json): Set<string> {
  const t = own(schema, 'type');
  if (typeof t === 'string') return new Set([t]);
  if (Array.isArray(t) && t.length > 0 && t.every((x) => typeof x === 'string')) return new Set(t as string[]);
  return new Set(ALL_TYPES);
}

/** Whether `types` accepts every value of JSON type `t` (a number type covers integers). */
const covers = (types: Set<string>, t: string): boolean => types.has(t) || (t === 'integer' && types.has('number'));

const typeLabel = (schema: Json): string => {
  const t = own(schema, 'type');
  return t === undefined ? 'any' : show(t);
};

/** The comparable form of an enum's values. */
const enumOf = (schema: Json): string[] | undefined => {
  const e = own(schema, 'enum');
  return Array.isArray(e) ? e.map((v) => canonicalJson(v)) : undefined;
};

// Keywords whose changes are reported on their own; any other keyword change is a constraint change.
const HANDLED = new Set([
  'type',
  'enum',
  'properties',
  'required',
  'items',
  'description',
  'title',
  'additionalProperties',
  'default',
  'examples',
  '$schema',
]);

interface Where {
  kind: SurfaceKind;
  name: string;
  /** `inputSchema`, `outputSchema` */
  root: string;
}

const param = (segments: readonly string[]): string => quote(segments.join('.'));

/** An input schema (what the server accepts): narrowing breaks callers, widening is news. */
function diffInput(
  out: Changes,
  w: Where,
  before: unknown,
  after: unknown,
  path: string,
  at: string[],
  depth: number,
): void {
  if (isCutSchema(before) || isCutSchema(after)) return;
  if (!isObject(before) || !isObject(after)) {
    if (canonicalJson(before) !== canonicalJson(after)) {
      out.add(
        'warning',
        w.kind,
        w.name,
        'schema_changed',
        `: ${at.length ? `parameter ${param(at)}` : w.root} schema changed`,
        path,
      );
    }
    return;
  }
  const subject = at.length ? `parameter ${param(at)}` : w.root;

  // Type: which values of before's types the new schema no longer accepts.
  const bt = typesOf(before);
  const at_ = typesOf(after);
  const lost = [...bt].filter((t) => !covers(at_, t));
  const gained = [...at_].filter((t) => !covers(bt, t));
  if (lost.length) {
    const narrowed = [...at_].every((t) => covers(bt, t));
    out.add(
      'breaking',
      w.kind,
      w.name,
      narrowed ? 'type_narrowed' : 'type_changed',
      `: ${subject} type ${narrowed ? 'narrowed' : 'changed'} from ${typeLabel(before)} to ${typeLabel(after)}`,
      `${path}.type`,
    );
  } else if (gained.length) {
    out.add(
      'info',
      w.kind,
      w.name,
      'type_widened',
      `: ${subject} type widened from ${typeLabel(before)} to ${typeLabel(after)}`,
      `${path}.type`,
    );
  }

  // Enum values: a removed one was a valid argument.
  const be = enumOf(before);
  const ae = enumOf(after);
  if (be && ae) {
    const removed = be.filter((v) => !ae.includes(v));
    const added = ae.filter((v) => !be.includes(v));
    if (removed.length) {
      out.add(
        'breaking',
        w.kind,
        w.name,
        'enum_removed',
        `: ${subject} no longer accepts ${removed.join(', ')}`,
        `${path}.enum`,
      );
    }
    if (added.length) {
      out.add(
        'info',
        w.kind,
        w.name,
        'enum_added',
        `: ${subject} now also accepts ${added.join(', ')}`,
        `${path}.enum`,
      );
    }
  } else if (ae && !be) {
    out.add('breaking', w.kind, w.name, 'enum_removed', `: ${subject} now limited to ${ae.join(', ')}`, `${path}.enum`);
  } else if (be && !ae) {
    out.add('info', w.kind, w.name, 'enum_added', `: ${subject} no longer limited to listed values`, `${path}.enum`);
  }

  texts(out, w.kind, w.name, before, after, at.length ? ['description', 'title'] : [], `${subject} `);

  const constraints = new Set([...Object.keys(before), ...Object.keys(after)].filter((k) => !HANDLED.has(k)));
  const changed = [...constraints].filter(
    (k) => canonicalJson(own(before, k) ?? null) !== canonicalJson(own(after, k) ?? null),
  );
  if (changed.length) {
    out.add(
      'warning',
      w.kind,
      w.name,
      'constraint_changed',
      `: ${subject} ${changed.slice(0, 5).join(', ')} changed`,
      path,
    );
  }

  if (depth >= SCHEMA_MAX_DEPTH) {
    const deeper = ['properties', 'required', 'items', 'additionalProperties'];
    if (deeper.some((k) => canonicalJson(own(before, k) ?? null) !== canonicalJson(own(after, k) ?? null))) {
      out.add(
        'warning',
        w.kind,
        w.name,
        'schema_changed',
        `: ${subject} changed deeper than ${SCHEMA_MAX_DEPTH} levels`,
        path,
      );
    }
    return;
  }

  // Properties: a new required one, or one made required, breaks every caller that omits it.
  const bp = isObject(own(before, 'properties')) ? (own(before, 'properties') as Json) : {};
  const ap = isObject(own(after, 'properties')) ? (own(after, 'properties') as Json) : {};
  const breq = requiredOf(before);
  const areq = requiredOf(after);
  const closed = own(after, 'additionalProperties') === false;
  for (const key of sortedUnion(bp, ap)) {
    const inB = Object.hasOwn(bp, key);
    const inA = Object.hasOwn(ap, key);
    const p = `${path}.properties.${key}`;
    const name = param([...at, key]);
    if (inB && !inA) {
      // A caller still sending it is refused only when the new schema closes its properties.
      const was = breq.has(key) ? 'required' : 'optional';
      out.add(
        closed ? 'breaking' : 'warning',
        w.kind,
        w.name,
        'parameter_removed',
        `: ${was} parameter ${name} removed${closed ? ' (no other properties allowed)' : ''}`,
        p,
      );
    } else if (!inB && inA) {
      if (areq.has(key)) out.add('breaking', w.kind, w.name, 'required_added', `: required parameter ${name} added`, p);
      else out.add('info', w.kind, w.name, 'parameter_added', `: optional parameter ${name} added`, p);
    } else {
      if (areq.has(key) && !breq.has(key)) {
        out.add('breaking', w.kind, w.name, 'required_added', `: parameter ${name} now required`, p);
      } else if (!areq.has(key) && breq.has(key)) {
        out.add('info', w.kind, w.name, 'required_removed', `: parameter ${name} now optional`, p);
      }
      diffInput(out, w, bp[key], ap[key], p, [...at, key], depth + 1);
    }
  }
  // A required name with no property schema (allowed by JSON Schema) still binds callers.
  for (const key of areq) {
    if (!breq.has(key) && !Object.hasOwn(ap, key) && !Object.hasOwn(bp, key)) {
      out.add(
        'breaking',
        w.kind,
        w.name,
        'required_added',
        `: parameter ${param([...at, key])} now required`,
        `${path}.required`,
      );
    }
  }
  if (own(before, 'additionalProperties') !== false && closed && Object.keys(ap).length > 0) {
    out.add(
      'breaking',
      w.kind,
      w.name,
      'type_narrowed',
      `: ${subject} no longer accepts other properties`,
      `${path}.additionalProperties`,
    );
  }

  const bi = own(before, 'items');
  const ai = own(after, 'items');
  if (isObject(bi) && isObject(ai)) diffInput(out, w, bi, ai, `${path}.items`, [...at, '[]'], depth + 1);
  else if (canonicalJson(bi ?? null) !== canonicalJson(ai ?? null)) {
    out.add('warning', w.kind, w.name, 'schema_changed', `: ${subject} items changed`, `${path}.items`);
  }
}

/** An output schema (what the server returns): a field removed breaks readers, one added is news. */
function diffOutput(
  out: Changes,
  w: Where,
  before: unknown,
  after: unknown,
  path: string,
  at: string[],
  depth: number,
): void {
  if (isCutSchema(before) || isCutSchema(after)) return;
  if (!isObject(before) || !isObject(after)) {
    if (canonicalJson(before) !== canonicalJson(after)) {
      out.add(
        'warning',
        w.kind,
        w.name,
        'schema_changed',
        `: ${at.length ? `output field ${param(at)}` : w.root} schema changed`,
        path,
      );
    }
    return;
  }
  const subject = at.length ? `output field ${param(at)}` : w.root;
  const bt = typesOf(before);
  const at_ = typesOf(after);
  if ([...bt].sort().join() !== [...at_].sort().join()) {
    out.add(
      'warning',
      w.kind,
      w.name,
      'output_type_changed',
      `: ${subject} type changed from ${typeLabel(before)} to ${typeLabel(after)}`,
      `${path}.type`,
    );
  }
  if (depth >= SCHEMA_MAX_DEPTH) return;
  const bp = isObject(own(before, 'properties')) ? (own(before, 'properties') as Json) : {};
  const ap = isObject(own(after, 'properties')) ? (own(after, 'properties') as Json) : {};
  const breq = requiredOf(before);
  const areq = requiredOf(after);
  for (const key of sortedUnion(bp, ap)) {
    const p = `${path}.properties.${key}`;
    const name = param([...at, key]);
    if (Object.hasOwn(bp, key) && !Object.hasOwn(ap, key)) {
      out.add('breaking', w.kind, w.name, 'output_removed', `: output field ${name} removed`, p);
    } else if (!Object.hasOwn(bp, key)) {
      out.add('info', w.kind, w.name, 'output_added', `: output field ${name} added`, p);
    } else {
      if (breq.has(key) && !areq.has(key)) {
        out.add('warning', w.kind, w.name, 'output_optional', `: output field ${name} no longer always present`, p);
      }
      diffOutput(out, w, bp[key], ap[key], p, [...at, key], depth + 1);
    }
  }
  const bi = own(before, 'items');
  const ai = own(after, 'items');
  if (isObject(bi) && isObject(ai)) diffOutput(out, w, bi, ai, `${path}.items`, [...at, '[]'], depth + 1);
}

function requiredOf(schema: Json): Set<string> {
  const r = own(schema, 'required');
  return new Set(Array.isArray(r) ? r.filter((x): x is string => typeof x === 'string') : []);
}

function sortedUnion(a: Json, b: Json): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
}

// --- items ---------------------------------------------------------------------------------------

function diffTool(out: Changes, b: SurfaceTool, a: SurfaceTool): void {
  const name = a.name;
  texts(out, 'tool', name, b as unknown as Json, a as unknown as Json, ['title', 'description']);
  const ba = b.annotations ?? {};
  const aa = a.annotations ?? {};
  for (const key of sortedUnion(ba, aa)) {
    const from = own(ba, key);
    const to = own(aa, key);
    if (canonicalJson(from ?? null) === canonicalJson(to ?? null) && (from === undefined) === (to === undefined))
      continue;
    out.add(
      'warning',
      'tool',
      name,
      'annotation_changed',
      `: annotation ${quote(key)} ${show(from)} → ${show(to)}`,
      `annotations.${key}`,
    );
  }
  const w = (root: string): Where => ({ kind: 'tool', name, root });
  diffInput(out, w('inputSchema'), b.inputSchema, a.inputSchema, 'inputSchema', [], 0);
  if (b.outputSchema !== undefined && a.outputSchema === undefined) {
    out.add(
      'breaking',
      'tool',
      name,
      'output_removed',
      ': outputSchema removed (no structured output declared)',
      'outputSchema',
    );
  } else if (b.outputSchema === undefined && a.outputSchema !== undefined) {
    out.add('info', 'tool', name, 'output_added', ': outputSchema added', 'outputSchema');
  } else if (b.outputSchema !== undefined) {
    diffOutput(out, w('outputSchema'), b.outputSchema, a.outputSchema, 'outputSchema', [], 0);
  }
}

function diffPrompt(out: Changes, b: SurfacePrompt, a: SurfacePrompt): void {
  const name = a.name;
  texts(out, 'prompt', name, b as unknown as Json, a as unknown as Json, ['title', 'description']);
  const args = (p: SurfacePrompt) =>
    [...(p.arguments ?? [])].sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  // A prompt's arguments are kept whole or not at all, so they are never cut part-way.
  pair(
    args(b),
    args(a),
    (x) => x.name,
    { before: false, after: false },
    {
      removed: (x) =>
        out.add(
          'warning',
          'prompt',
          name,
          'argument_removed',
          `: argument ${quote(x.name)} removed`,
          `arguments.${x.name}`,
        ),
      added: (x) =>
        x.required
          ? out.add(
              'breaking',
              'prompt',
              name,
              'required_added',
              `: required argument ${quote(x.name)} added`,
              `arguments.${x.name}`,
            )
          : out.add(
              'info',
              'prompt',
              name,
              'argument_added',
              `: optional argument ${quote(x.name)} added`,
              `arguments.${x.name}`,
            ),
      both: (x, y) => {
        const p = `arguments.${x.name}`;
        if (y.required && !x.required) {
          out.add('breaking', 'prompt', name, 'required_added', `: argument ${quote(x.name)} now required`, p);
        } else if (!y.required && x.required) {
          out.add('warning', 'prompt', name, 'required_removed', `: argument ${quote(x.name)} now optional`, p);
        }
        if (!sameText(x.description, y.description)) {
          out.add(
            'warning',
            'prompt',
            name,
            'description_changed',
            `: argument ${quote(x.name)} description changed`,
            p,
          );
        }
      },
    },
  );
}

function diffListed<T extends SurfaceResource | SurfaceTemplate>(
  out: Changes,
  kind: SurfaceKind,
  key: string,
  b: T,
  a: T,
): void {
  texts(out, kind, key, b as unknown as Json, a as unknown as Json, ['name', 'title', 'description', 'mimeType']);
}

function diffCapabilities(out: Changes, before: Json, after: Json): void {
  for (const key of sortedUnion(before, after)) {
    const b = own(before, key);
    const a = own(after, key);
    if (b !== undefined && a === undefined) out.add('breaking', 'capability', key, 'removed', ' removed');
    else if (b === undefined && a !== undefined) out.add('info', 'capability', key, 'added', ' added');
    else if (canonicalJson(b) !== canonicalJson(a)) {
      // A sub-flag (listChanged, subscribe…) changed: what clients may rely on moved, the feature stayed.
      const bo = isObject(b) ? b : {};
      const ao = isObject(a) ? a : {};
      const keys = sortedUnion(bo, ao).filter(
        (k) => canonicalJson(own(bo, k) ?? null) !== canonicalJson(own(ao, k) ?? null),
      );
      if (!keys.length) {
        out.add('warning', 'capability', key, 'capability_changed', `: ${show(b)} → ${show(a)}`, key);
      }
      for (const k of keys) {
        out.add(
          'warning',
          'capability',
          key,
          'capability_changed',
          `: ${quote(k)} ${show(own(bo, k))} → ${show(own(ao, k))}`,
          `${key}.${k}`,
        );
      }
    }
  }
}

function diffServerInfo(out: Changes, before: Surface['serverInfo'], after: Surface['serverInfo']): void {
  if (!before || !after) return;
  if (before.version !== after.version) {
    out.add(
      'info',
      'server_info',
      after.name,
      'version_changed',
      ` version ${show(before.version)} → ${show(after.version)}`,
      'serverInfo.version',
    );
  }
  if (before.name !== after.name) {
    out.add(
      'warning',
      'server_info',
      after.name,
      'name_changed',
      ` name ${show(before.name)} → ${show(after.name)}`,
      'serverInfo.name',
    );
  }
  if (before.title !== after.title) {
    out.add(
      'warning',
      'server_info',
      after.name,
      'title_changed',
      ` title ${show(before.title)} → ${show(after.title)}`,
      'serverInfo.title',
    );
  }
}

/** The classified changes from `before` to `after` (two snapshots of the same era), in a stable order. */
export function diffSurfaces(before: Surface, after: Surface): SurfaceChange[] {
  const out = new Changes();
  const truncated = { before: before.truncated, after: after.truncated };
  diffCapabilities(out, before.capabilities ?? {}, after.capabilities ?? {});
  const removed = (kind: SurfaceKind) => (key: string) => out.add('breaking', kind, key, 'removed', ' removed');
  const added = (kind: SurfaceKind) => (key: string) => out.add('info', kind, key, 'added', ' added');
  pair(before.tools, after.tools, (t) => t.name, truncated, {
    removed: (t) => removed('tool')(t.name),
    added: (t) => added('tool')(t.name),
    both: (b, a) => diffTool(out, b, a),
  });
  pair(before.resources, after.resources, (r) => r.uri, truncated, {
    removed: (r) => removed('resource')(r.uri),
    added: (r) => added('resource')(r.uri),
    both: (b, a) => diffListed(out, 'resource', a.uri, b, a),
  });
  pair(before.resourceTemplates, after.resourceTemplates, (r) => r.uriTemplate, truncated, {
    removed: (r) => removed('resource_template')(r.uriTemplate),
    added: (r) => added('resource_template')(r.uriTemplate),
    both: (b, a) => diffListed(out, 'resource_template', a.uriTemplate, b, a),
  });
  pair(before.prompts, after.prompts, (p) => p.name, truncated, {
    removed: (p) => removed('prompt')(p.name),
    added: (p) => added('prompt')(p.name),
    both: (b, a) => diffPrompt(out, b, a),
  });
  diffServerInfo(out, before.serverInfo, after.serverInfo);
  return out.list;
}

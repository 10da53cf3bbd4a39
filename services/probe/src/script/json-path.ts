// The JSON paths a script's assertions name: a small safe subset of JSONPath — `$`, `.key`,
// `['key']` (or `["key"]`) and `[index]` — read in one pass over the path, never evaluated.
//
// Hand-written on purpose: a fleet file is hostile input, and the JSONPath libraries evaluate
// filter expressions (`?(@.price < 10)`, script expressions in jsonpath/jsonpath-plus, which have
// run code through eval before) and descendant or wildcard walks over a whole answer. A check only
// needs to point at one value; this subset cannot run code and costs one step per segment.

export type PathSegment = string | number;

export const PATH_MAX_CHARS = 200;
export const PATH_MAX_SEGMENTS = 32;

/** The segments of `path`, or why it is not in the subset. */
export function parsePath(path: string): { ok: true; segments: PathSegment[] } | { ok: false; error: string } {
  if (path.length > PATH_MAX_CHARS) return { ok: false, error: `a path has at most ${PATH_MAX_CHARS} characters` };
  if (!path.startsWith('$')) return { ok: false, error: 'a path starts with $' };
  const segments: PathSegment[] = [];
  let i = 1;
  while (i < path.length) {
    if (segments.length >= PATH_MAX_SEGMENTS)
      return { ok: false, error: `a path has at most ${PATH_MAX_SEGMENTS} segments` };
    const c = path[i];
    if (c === '.') {
      const m = /^[A-Za-z_$][A-Za-z0-9_$-]*/.exec(path.slice(i + 1));
      if (!m) return { ok: false, error: `a name after "." at character ${i + 1}` };
      segments.push(m[0]);
      i += 1 + m[0].length;
    } else if (c === '[') {
      const index = /^\[(\d{1,6})\]/.exec(path.slice(i));
      if (index) {
        segments.push(Number(index[1]));
        i += index[0].length;
        continue;
      }
      const quoted = /^\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")\]/.exec(path.slice(i));
      if (!quoted) return { ok: false, error: `[index] or ['key'] at character ${i}` };
      segments.push((quoted[1] ?? quoted[2] ?? '').replace(/\\(.)/g, '$1'));
      i += quoted[0].length;
    } else {
      return { ok: false, error: `unexpected "${c}" at character ${i} (the subset is $, .key, ['key'], [index])` };
    }
  }
  return { ok: true, segments };
}

/** The value at `segments`, read through own properties only (never a prototype's). */
export function valueAt(root: unknown, segments: readonly PathSegment[]): { found: boolean; value: unknown } {
  let value = root;
  for (const s of segments) {
    if (typeof s === 'number') {
      if (!Array.isArray(value) || s >= value.length) return { found: false, value: undefined };
      value = value[s];
    } else {
      if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, s))
        return { found: false, value: undefined };
      value = (value as Record<string, unknown>)[s];
    }
  }
  return { found: true, value };
}

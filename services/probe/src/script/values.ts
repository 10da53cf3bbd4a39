// Comparing JSON values a server sent with values a fleet file or a recording holds. Both may be
// hostile (deep, wide, odd keys): every walk here is bounded in depth, and reads own keys only.

/** Deeper than this, two values are not compared (and so not equal): no answer a check reads nests so far. */
export const COMPARE_MAX_DEPTH = 64;

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** JSON equality: same type, same items in order, same keys in any order. */
export function deepEqual(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (depth > COMPARE_MAX_DEPTH) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => deepEqual(item, b[i], depth + 1));
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k], depth + 1));
  }
  return false;
}

/** A value as a message quotes it: JSON, cut to `max` characters. */
export function shown(value: unknown, max = 80): string {
  let text: string;
  try {
    text = value === undefined ? 'nothing' : JSON.stringify(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

// How a surface is cut to fit a snapshot (SURFACE_MAX_CHARS): the marks a cut leaves, so a diff can
// tell "the server changed this" from "the reader cut this".
import { CUT_MARK } from '../bounds';

/**
 * A schema too large to keep is replaced by `{ [SCHEMA_CUT_KEY]: <its canonical length> }`; a diff
 * does not compare inside a cut schema.
 */
export const SCHEMA_CUT_KEY = 'x-mcp-fleet-cut';

export function isCutSchema(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && Object.hasOwn(schema, SCHEMA_CUT_KEY);
}

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

// Judging a replayed answer against the recorded one (seed 002's three acceptable outcomes, and
// the fourth): `same`; `newer_equivalent`, everything recorded is still there and only fields or
// items were added; `protocol_error`, the server now refuses with a clean JSON-RPC error; `broken`,
// anything else (a field gone, a value or a type changed, no answer at all).
import type { WholeAnswer } from './answer';
import { COMPARE_MAX_DEPTH, deepEqual, isPlainObject, shown } from './values';

export type ReplayVerdict = 'same' | 'newer_equivalent' | 'protocol_error' | 'broken';

export interface Judged {
  verdict: ReplayVerdict;
  reason: string;
}

export type Recorded = { result: Record<string, unknown> } | { error: { code: number; message: string } };

/** Judge `got` (the replay's answer; undefined: none, `why` says what came instead) against `recorded`. */
export function compareAnswer(
  recorded: Recorded,
  got: WholeAnswer | undefined,
  why: string,
  httpStatus: number | null,
): Judged {
  if (!got) return { verdict: 'broken', reason: why };
  if ('error' in recorded) {
    if (got.kind === 'result')
      return { verdict: 'newer_equivalent', reason: 'the server now answers what it refused when recorded' };
    if (got.code === recorded.error.code)
      return {
        verdict: 'same',
        reason: `the same error ${got.code}${got.message === recorded.error.message ? '' : ' (its message changed)'}`,
      };
    return {
      verdict: 'protocol_error',
      reason: `JSON-RPC error ${got.code} ${oneLine(got.message)} (recorded: ${recorded.error.code})`,
    };
  }
  if (got.kind === 'error') {
    const what = `JSON-RPC error ${got.code} ${oneLine(got.message)}`;
    // A 5xx with an error body is the server failing, not refusing.
    if (httpStatus !== null && httpStatus >= 500) return { verdict: 'broken', reason: `${what} (HTTP ${httpStatus})` };
    return { verdict: 'protocol_error', reason: `the server now refuses: ${what}` };
  }
  const before = withoutMeta(recorded.result);
  const now = withoutMeta(got.result);
  if (deepEqual(before, now)) return { verdict: 'same', reason: 'the answer is the same' };
  if (now.isError === true && before.isError !== true)
    return { verdict: 'broken', reason: 'the tool now answers isError: true' };
  const budget = { left: COMPARE_MAX_STEPS };
  const lost = firstLoss(before, now, '$', 0, budget);
  if (lost) return { verdict: 'broken', reason: lost };
  const more = additions(before, now, '$', 0, []);
  return {
    verdict: 'newer_equivalent',
    reason: `everything recorded is still there; added ${more.slice(0, 3).join(', ')}${more.length > 3 ? ', …' : ''}`,
  };
}

/** A result's own `_meta` is the transport's (era-specific), not what the method answered. */
function withoutMeta(result: Record<string, unknown>): Record<string, unknown> {
  const { _meta, ...rest } = result;
  return rest;
}

function key(path: string, k: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`;
}

function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : typeof v;
}

/**
 * How many value pairs one comparison may visit: matching list items against later items is a
 * search, and a hostile answer (wide lists in wide lists) must not make it run for minutes.
 */
export const COMPARE_MAX_STEPS = 1_000_000;

/** Whether everything in `before` is in `now` (now may have more): the first loss, or undefined. */
function firstLoss(
  before: unknown,
  now: unknown,
  path: string,
  depth: number,
  budget: { left: number },
): string | undefined {
  budget.left -= 1;
  if (budget.left < 0) return `${path || '$'}: too large to compare (more than ${COMPARE_MAX_STEPS} values)`;
  if (depth > COMPARE_MAX_DEPTH)
    return `${path}: nests deeper than ${COMPARE_MAX_DEPTH} levels, more than a replay compares`;
  if (Array.isArray(before)) {
    if (!Array.isArray(now)) return `${path}: was a list, now ${typeName(now)}`;
    // A list of required names gains nothing harmlessly: a new required parameter breaks callers.
    if (path.endsWith('.required') && before.every((x) => typeof x === 'string')) {
      const added = now.filter((x) => !before.includes(x));
      if (added.length) return `${path}: now also requires ${shown(added)}`;
    }
    // The recorded items, in order, each found in a later item of the new list (items may be inserted).
    let j = 0;
    for (const [i, item] of before.entries()) {
      const start = j;
      while (j < now.length && firstLoss(item, now[j], '', depth + 1, budget) !== undefined) j += 1;
      if (budget.left < 0) return `${path || '$'}: too large to compare (more than ${COMPARE_MAX_STEPS} values)`;
      if (j === now.length) {
        // Say what differs from the item that stands where it stood, when there is one.
        const there = now[Math.min(i, now.length - 1)];
        const why =
          start < now.length && there !== undefined
            ? firstLoss(item, there, `${path}[${i}]`, depth + 1, budget)
            : undefined;
        return why ?? `${path}[${i}]: missing (was ${shown(item)})`;
      }
      j += 1;
    }
    return undefined;
  }
  if (isPlainObject(before)) {
    if (!isPlainObject(now)) return `${path}: was an object, now ${typeName(now)}`;
    for (const [k, v] of Object.entries(before)) {
      const at = key(path, k);
      if (!Object.hasOwn(now, k)) return `${at}: missing (was ${shown(v)})`;
      const lost = firstLoss(v, now[k], at, depth + 1, budget);
      if (lost) return lost;
    }
    return undefined;
  }
  if (before === now) return undefined;
  if (typeName(before) !== typeName(now))
    return `${path}: was ${typeName(before)} ${shown(before)}, now ${typeName(now)} ${shown(now)}`;
  return `${path}: was ${shown(before)}, now ${shown(now)}`;
}

/** Where `now` has more than `before` (both already known to contain it), a few paths. */
function additions(before: unknown, now: unknown, path: string, depth: number, out: string[]): string[] {
  if (out.length > 3 || depth > COMPARE_MAX_DEPTH) return out;
  if (Array.isArray(before) && Array.isArray(now)) {
    if (now.length > before.length)
      out.push(`${now.length - before.length} item${now.length - before.length === 1 ? '' : 's'} in ${path}`);
    else for (const [i, item] of before.entries()) additions(item, now[i], `${path}[${i}]`, depth + 1, out);
    return out;
  }
  if (isPlainObject(before) && isPlainObject(now)) {
    for (const k of Object.keys(now)) {
      if (!Object.hasOwn(before, k)) out.push(key(path, k));
      else additions(before[k], now[k], key(path, k), depth + 1, out);
    }
  }
  return out;
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

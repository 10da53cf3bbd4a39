// Judging one step's answer by its assertions: each says what held or, for the first that did
// not, one line naming the path, what was expected and what was found.
//
// `matches` patterns come from a fleet file and are run on text a server chose: they go through
// re2js (RE2 in JavaScript: linear-time matching, no backtracking, so no catastrophic pattern),
// with the pattern and the text bounded too. RE2 syntax is JavaScript's minus lookaround and
// backreferences; a pattern using them fails the step with RE2's own words.
import { RE2JS } from 're2js';
import { parsePath, valueAt } from './json-path';
import type { ScriptAssertion } from './script';
import { deepEqual, shown } from './values';

export const PATTERN_MAX_CHARS = 200;
/** The most characters of a value `matches` and `contains` read (beyond: the step fails, said so). */
export const MATCH_INPUT_MAX_CHARS = 64 * 1024;

export interface Answered {
  /** The tools/call result, or any other method's result. */
  result: Record<string, unknown>;
  millis: number;
}

/** The first assertion that does not hold, as a message; undefined when all hold. */
export function firstFailure(expect: readonly ScriptAssertion[], answer: Answered): string | undefined {
  for (const a of expect) {
    const failure = judge(a, answer);
    if (failure !== undefined) return failure;
  }
  return undefined;
}

function judge(a: ScriptAssertion, answer: Answered): string | undefined {
  if ('latencyMs' in a)
    return answer.millis <= a.latencyMs
      ? undefined
      : `latency: expected at most ${a.latencyMs} ms, took ${answer.millis} ms`;
  if ('isError' in a) {
    const actual = answer.result.isError === true;
    return actual === a.isError ? undefined : `isError: expected ${a.isError}, the answer says ${actual}`;
  }
  const parsed = parsePath(a.path);
  if (!parsed.ok) return `${shown(a.path, 60)}: not a path this version reads (${parsed.error})`;
  const at = valueAt(answer.result, parsed.segments);
  if (!at.found) return `${a.path}: nothing at this path`;
  const value = at.value;
  if ('equals' in a)
    return deepEqual(value, a.equals) ? undefined : `${a.path}: expected ${shown(a.equals)}, found ${shown(value)}`;
  if ('contains' in a) {
    if (Array.isArray(value))
      return value.some((item) => deepEqual(item, a.contains))
        ? undefined
        : `${a.path}: expected the list ${shown(value)} to contain ${shown(a.contains)}`;
    if (typeof value !== 'string')
      return `${a.path}: expected text or a list to contain ${shown(a.contains)}, found ${shown(value)}`;
    if (value.length > MATCH_INPUT_MAX_CHARS)
      return `${a.path}: the text is longer than ${MATCH_INPUT_MAX_CHARS} characters, more than a check reads`;
    return value.includes(a.contains)
      ? undefined
      : `${a.path}: expected ${shown(value)} to contain ${shown(a.contains)}`;
  }
  if ('matches' in a) {
    if (typeof value !== 'string')
      return `${a.path}: expected text to match /${shown(a.matches, 60)}/, found ${shown(value)}`;
    if (value.length > MATCH_INPUT_MAX_CHARS)
      return `${a.path}: the text is longer than ${MATCH_INPUT_MAX_CHARS} characters, more than a check reads`;
    const pattern = compiled(a.matches);
    if (typeof pattern === 'string') return `${a.path}: ${pattern}`;
    return pattern.test(value) ? undefined : `${a.path}: expected ${shown(value)} to match /${shown(a.matches, 60)}/`;
  }
  return 'an assertion this version does not know';
}

/** The pattern compiled by RE2, or why it cannot be. */
export function compiled(pattern: string): RE2JS | string {
  if (pattern.length > PATTERN_MAX_CHARS) return `a pattern has at most ${PATTERN_MAX_CHARS} characters`;
  try {
    return RE2JS.compile(pattern);
  } catch (err) {
    return `the pattern is not one RE2 accepts (${shown((err as Error)?.message ?? String(err), 120)})`;
  }
}

// What is wrong with a fleet definition, said once per problem in the words of the file: where
// (file:line:column, as compilers and editors read it), which field, and what would be right —
// "did you mean `revision`?" for a misspelt key, "a duration such as 10s" for a bare number. The
// same lines come out of `mcp-fleet validate`, `mcp-fleet apply`, control's --fleet load and
// POST /api/fleet, because they all read the fleet through fleet-file.ts, which reports here.
import { closestMatch } from 'leven';
import { z } from 'zod';

/** Where a problem is written: 1-based line and column, when the fleet came from a file's text. */
export interface Position {
  line: number;
  column: number;
}

export interface FleetProblem {
  at?: Position | undefined;
  /** The field as a path (`servers[0].tests[0].revision`), when the problem is one field's. */
  field?: string | undefined;
  message: string;
}

export class FleetFileError extends Error {
  /** One line per problem, each naming the file: `fleet.yaml:6:9: servers[0].timeout: …`. */
  readonly problems: string[];

  constructor(
    readonly file: string,
    readonly found: FleetProblem[],
  ) {
    const problems = found.map((p) => problemLine(file, p));
    super(`invalid fleet definition, nothing applied:\n  ${problems.join('\n  ')}`);
    this.problems = problems;
  }
}

export function problemLine(file: string, p: FleetProblem): string {
  const where = p.at ? `${file}:${p.at.line}:${p.at.column}` : file;
  return `${where}: ${p.field ? `${p.field}: ` : ''}${p.message}`;
}

/** `servers[0].tests[1].revision` for a path; the whole file is `(file)`. */
export function fieldName(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(file)';
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');
}

/** A duration written without its unit (`timeout: 10`): what to write instead. */
export function unitlessDuration(value: string | number): string {
  return `${value} has no unit: write a duration such as ${value}s (ms, s, m or h)`;
}

/**
 * The schema's issues as problems. A misspelt key is one problem, not two: its "unknown key …
 * did you mean `revision`?" stands for the required key it missed, whose own "missing" is dropped.
 * `posOf` says where a path is written; `keyPosOf` where a key of a mapping is.
 */
export function schemaProblems(
  schema: z.ZodType,
  issues: readonly z.core.$ZodIssue[],
  posOf: (path: readonly PropertyKey[]) => Position | undefined,
  keyPosOf: (path: readonly PropertyKey[], key: string) => Position | undefined,
): FleetProblem[] {
  const out: FleetProblem[] = [];
  const standsFor = new Set<string>();
  for (const issue of issues) {
    if (issue.code !== 'unrecognized_keys') continue;
    const known = keysAt(schema, issue.path);
    for (const key of issue.keys) {
      const guess = closestMatch(key, known, { maxDistance: Math.min(3, Math.max(2, Math.floor(key.length / 3))) });
      const suggestion = guess && guess !== key ? guess : undefined;
      if (suggestion) standsFor.add(JSON.stringify([...issue.path, suggestion]));
      out.push({
        at: keyPosOf(issue.path, key) ?? posOf(issue.path),
        field: fieldName(issue.path),
        message: suggestion
          ? `unknown key \`${key}\`: did you mean \`${suggestion}\`?`
          : `unknown key \`${key}\` (${known.length ? `known here: ${known.join(', ')}` : 'none is known here'})`,
      });
    }
  }
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') continue;
    const missing = issue.code === 'invalid_type' && issue.input === undefined;
    if (missing && standsFor.has(JSON.stringify(issue.path))) continue;
    const parent = issue.path.slice(0, -1);
    out.push(
      missing && issue.path.length > 0
        ? { at: posOf(parent), field: fieldName(parent), message: `\`${String(issue.path.at(-1))}\` is missing` }
        : { at: posOf(issue.path), field: fieldName(issue.path), message: issueMessage(issue) },
    );
  }
  return out.sort((a, b) => (a.at?.line ?? 0) - (b.at?.line ?? 0) || (a.at?.column ?? 0) - (b.at?.column ?? 0));
}

/** Zod's own wording for a wrong type ("Invalid input: expected string, received number") in the file's terms. */
function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type' && issue.message.startsWith('Invalid input'))
    return `expected ${KINDS[issue.expected] ?? issue.expected}, not ${kindOf(issue.input)}`;
  return issue.message;
}

const KINDS: Record<string, string> = {
  string: 'text',
  array: 'a list',
  object: 'a mapping (key: value)',
  number: 'a number',
  boolean: 'true or false',
  record: 'a mapping (key: value)',
};

function kindOf(value: unknown): string {
  if (value === null) return 'nothing (null)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return 'text';
  return `${typeof value === 'number' ? 'the number' : typeof value} ${JSON.stringify(value)}`;
}

/** The keys the schema knows at a path of its input, for the suggestion. */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let s: z.ZodType | undefined = bare(schema);
  for (const p of path) {
    if (s instanceof z.ZodArray && typeof p === 'number') s = bare(s.element as z.ZodType);
    else if (s instanceof z.ZodObject && typeof p === 'string') s = bare(s.shape[p] as z.ZodType | undefined);
    else return [];
  }
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

/** The schema under its defaults, optionals and preprocessing. */
function bare(schema: z.ZodType | undefined): z.ZodType | undefined {
  let s = schema;
  for (;;) {
    if (s instanceof z.ZodDefault || s instanceof z.ZodOptional || s instanceof z.ZodNullable)
      s = s.unwrap() as z.ZodType;
    else if (s instanceof z.ZodPipe) s = s.out as z.ZodType;
    else return s;
  }
}

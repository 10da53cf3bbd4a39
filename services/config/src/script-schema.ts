// A script-depth test's steps (probe's Script), as the fleet file, the API, the store and a job
// carry them: one schema, here (config is below bus in the package graph; bus re-exports it).
// Bounded: a script is a short check, not a workload.
import { createHash } from 'node:crypto';
import { SCRIPT_MAX_ASSERTIONS, SCRIPT_MAX_PARAMS_CHARS, SCRIPT_MAX_STEPS, type Script } from '@mcp-fleet/probe';
import { z } from 'zod';

const path = z.string().min(1).max(200);
const assertion = z.union(
  [
    z.strictObject({ path, equals: z.unknown() }),
    z.strictObject({ path, contains: z.string().max(1000) }),
    z.strictObject({ path, matches: z.string().max(200) }),
    z.strictObject({ isError: z.boolean() }),
    z.strictObject({ latencyMs: z.number().int().positive().max(120_000) }),
  ],
  { error: 'an assertion: {path, equals}, {path, contains}, {path, matches}, {isError} or {latencyMs}' },
);

/** One step: an MCP method, its params, what its answer must hold. */
export const ScriptStepSchema = z.strictObject({
  method: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[a-z][A-Za-z0-9_/]*$/, 'an MCP method such as tools/call'),
  params: z
    .record(z.string(), z.unknown())
    .refine((p) => JSON.stringify(p).length <= SCRIPT_MAX_PARAMS_CHARS, {
      message: `at most ${SCRIPT_MAX_PARAMS_CHARS} characters as JSON`,
    })
    .optional(),
  expect: z.array(assertion).max(SCRIPT_MAX_ASSERTIONS, `at most ${SCRIPT_MAX_ASSERTIONS} assertions`).optional(),
});

export const ScriptStepsSchema = z
  .array(ScriptStepSchema)
  .min(1, 'at least one step')
  .max(SCRIPT_MAX_STEPS, `at most ${SCRIPT_MAX_STEPS} steps`);

export const ScriptSchema = z.strictObject({
  steps: ScriptStepsSchema,
  allowWrites: z.boolean().optional(),
});

/**
 * A script's identity among its server's tests: a short hash of its canonical JSON. Two script
 * tests of one revision differ by their steps; a test whose steps change is another test (its
 * history starts again, as a handshake test's does when its revision changes).
 */
export function scriptKey(script: Script): string {
  return createHash('sha256').update(canonicalJson(script)).digest('hex').slice(0, 12);
}

/** JSON with object keys sorted: equal scripts hash equal whatever order their keys were written in. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

// A scripted check (seed 002, "record real sessions and replay them"): a short sequence of MCP
// requests from the fleet file, each with assertions on its answer, run in the test's revision.
// A script may only call tools the server marks readOnlyHint unless the test allows writes.
import type { Outcome } from '../outcomes';
import type { Era } from '../revisions';

/** One assertion on a step's answer. `path` is a JSON path into the result (`$.content[0].text`). */
export type ScriptAssertion =
  | { path: string; equals: unknown }
  | { path: string; contains: string }
  | { path: string; matches: string }
  | { isError: boolean }
  | { latencyMs: number };

export interface ScriptStep {
  /** An MCP method: tools/call, tools/list, resources/read, prompts/get, … */
  method: string;
  params?: Record<string, unknown>;
  expect?: ScriptAssertion[];
}

export interface Script {
  steps: ScriptStep[];
  /** Call tools the server does not mark readOnlyHint (default false: such a step is refused). */
  allowWrites?: boolean;
}

export interface ScriptStepResult {
  index: number;
  method: string;
  /** The tool, prompt or resource the step names, if any. */
  name: string | null;
  status: 'pass' | 'fail' | 'skip';
  /** What held, or the first assertion that failed ("$.content[0].text: expected … to contain …"). */
  message: string;
  millis: number;
}

export interface ScriptRun {
  protocol: { requested: string; negotiated: string | null; era: Era | null };
  /** Connected, and every step passed. */
  pass: boolean;
  outcome: Outcome;
  message: string;
  steps: ScriptStepResult[];
  requests: number;
  millis: number;
}

export const SCRIPT_MAX_STEPS = 16;
export const SCRIPT_MAX_ASSERTIONS = 8;
/** The most characters a step's params may take as JSON. */
export const SCRIPT_MAX_PARAMS_CHARS = 4096;

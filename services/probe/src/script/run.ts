// A script-depth run (seed 002): open a conversation in the test's revision, send each step's
// request in order and judge its answer by the step's assertions. Bounded like every probe (a
// request budget, a deadline, every word redacted and cut). A tools/call of a tool the server does
// not mark readOnlyHint is refused before anything is sent, unless the script allows writes.
//
// Outcomes (outcomes.ts, no new one): `success` when every step passed; the opening's own outcome
// when the conversation did not open; otherwise the first failed step's: a transport failure or an
// HTTP wall judged as an opening would be (timeout, unreachable, server_error, rate_limited,
// auth_required…), and `protocol_error` for an answer that is a JSON-RPC error, isError, or fails an
// assertion, and for a refused write.
import { BOUNDS, cut, excerpt } from '../bounds';
import type { Connection } from '../conformance/connection';
import { DEFAULT_TIMEOUT_MS, ProbeContext, type ProbeOptions } from '../context';
import { storable } from '../evidence';
import { judge } from '../opening';
import type { Outcome } from '../outcomes';
import { eraOf, type Revision } from '../revisions';
import { wholeAnswer } from './answer';
import { firstFailure } from './assertions';
import { openPinned } from './connect';
import { type ReadOnlyTools, readOnlyTools } from './read-only';
import {
  SCRIPT_MAX_ASSERTIONS,
  SCRIPT_MAX_PARAMS_CHARS,
  SCRIPT_MAX_STEPS,
  type Script,
  type ScriptRun,
  type ScriptStep,
  type ScriptStepResult,
} from './script';

/** The opening, tools/list pages and every step, with room to close a session. */
export const SCRIPT_MAX_REQUESTS = SCRIPT_MAX_STEPS + 12;
/** The whole run's deadline (`timeoutMs` bounds each request). */
export const SCRIPT_MAX_MS = 60_000;

export interface ScriptOptions extends ProbeOptions {
  protocol: Revision;
  script: Script;
}

export async function runScript(url: string | URL, opts: ScriptOptions): Promise<ScriptRun> {
  const { protocol, script } = opts;
  const ctx = new ProbeContext(new URL(url), opts, {
    maxRequests: SCRIPT_MAX_REQUESTS,
    totalMs: SCRIPT_MAX_MS,
    perRequestMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  const steps = script.steps ?? [];
  const finish = (outcome: Outcome, message: string, results: ScriptStepResult[], negotiated: string | null) =>
    storable<ScriptRun>({
      protocol: { requested: protocol, negotiated, era: eraOf(negotiated) },
      pass: outcome === 'success' && results.every((s) => s.status === 'pass'),
      outcome,
      message: excerpt(message, ctx.secrets, BOUNDS.message),
      steps: results.map((s) => ({ ...s, message: excerpt(s.message, ctx.secrets, BOUNDS.check) })),
      requests: ctx.requests,
      millis: ctx.millis(),
    });

  // The bus's schema bounds a script already; a caller that skipped it gets a refusal, not a workload.
  const over = overBounds(script);
  if (over) return finish('protocol_error', `the script is over its bounds: ${over}`, [], null);

  const opened = await openPinned(ctx, protocol);
  if (!opened.ok)
    return finish(
      opened.outcome,
      opened.message,
      steps.map((s, index) => skipped(s, index, 'not run: the conversation did not open')),
      null,
    );
  const conn = opened.connection;
  const results: ScriptStepResult[] = [];
  let failed: { index: number; outcome: Outcome } | undefined;
  try {
    // Read the tool list once, before any step, when a step calls a tool and writes are not allowed.
    let tools: ReadOnlyTools | undefined;
    if (!script.allowWrites && steps.some((s) => s.method === 'tools/call')) tools = await readOnlyTools(conn);
    let stopped: string | undefined;
    for (const [index, step] of steps.entries()) {
      if (stopped) {
        results.push(skipped(step, index, stopped));
        continue;
      }
      const judged = await runStep(conn, step, index, tools, script.allowWrites === true);
      results.push(judged.result);
      if (judged.result.status === 'fail' && !failed) failed = { index, outcome: judged.outcome };
      // A server that stopped answering will not answer the next step either: say so once.
      if (judged.transportFailure) stopped = `not run: the server stopped answering at step ${index + 1}`;
    }
  } finally {
    await conn.close();
  }
  const passed = results.filter((r) => r.status === 'pass').length;
  if (!failed) return finish('success', `${passed} of ${steps.length} steps passed`, results, conn.revision);
  const first = results[failed.index]!;
  return finish(
    failed.outcome,
    `step ${failed.index + 1} (${first.method}${first.name ? ` ${first.name}` : ''}) failed: ${first.message}; ${passed} of ${steps.length} steps passed`,
    results,
    conn.revision,
  );
}

async function runStep(
  conn: Connection,
  step: ScriptStep,
  index: number,
  tools: ReadOnlyTools | undefined,
  allowWrites: boolean,
): Promise<{ result: ScriptStepResult; outcome: Outcome; transportFailure?: boolean }> {
  const name = nameOf(step);
  const base = { index, method: cut(step.method, 100), name: name === null ? null : cut(name, BOUNDS.name) };
  const fail = (message: string, outcome: Outcome = 'protocol_error', millis = 0) => ({
    result: { ...base, status: 'fail' as const, message, millis },
    outcome,
  });
  if (step.method === 'tools/call' && !allowWrites) {
    if (name === null) return fail('refused: a tools/call step names its tool in params.name');
    if (!tools?.ok) return fail(`refused: ${tools?.message ?? 'the tool list was not read'}`);
    if (!tools.readOnly.has(name))
      return fail(
        tools.listed.has(name)
          ? `refused: tool ${name} is not marked readOnlyHint: true (set allowWrites: true on the test to call it)`
          : `refused: tool ${name} is not in the server's tool list, so it is not known to be read-only`,
      );
  }
  if (conn.ctx.requestsLeft <= 0 || conn.ctx.remainingMs() <= 0)
    return fail("not run: the run's request budget or deadline is spent", 'timeout');
  const ex = await conn.call(step.method, step.params ?? {});
  const answer = wholeAnswer(ex);
  if (!answer) {
    const judged = judge(ex, step.method);
    return { ...fail(judged.message, judged.outcome, ex.millis), transportFailure: ex.failure !== null };
  }
  if (answer.kind === 'error') {
    // An HTTP wall with a JSON-RPC body (a 401 or a 5xx) keeps its own outcome.
    const wall =
      ex.status !== null && (ex.status === 401 || ex.status === 403 || ex.status === 429 || ex.status >= 500);
    return fail(
      `JSON-RPC error ${answer.code} ${oneLine(answer.message)}`,
      wall ? judge(ex, step.method).outcome : 'protocol_error',
      ex.millis,
    );
  }
  const expect = step.expect ?? [];
  const failure =
    firstFailure(expect, { result: answer.result, millis: ex.millis }) ??
    // A tool that answered isError fails its step unless the step says what isError it expects.
    (step.method === 'tools/call' && answer.result.isError === true && !expect.some((a) => 'isError' in a)
      ? `isError: the tool answered isError: true (${toolErrorText(answer.result)})`
      : undefined);
  if (failure) return fail(failure, 'protocol_error', ex.millis);
  return {
    result: {
      ...base,
      status: 'pass',
      message: expect.length ? `${expect.length} assertion${expect.length === 1 ? '' : 's'} held` : 'answered',
      millis: ex.millis,
    },
    outcome: 'success',
  };
}

function skipped(step: ScriptStep, index: number, message: string): ScriptStepResult {
  const name = nameOf(step);
  return {
    index,
    method: cut(step.method, 100),
    name: name === null ? null : cut(name, BOUNDS.name),
    status: 'skip',
    message,
    millis: 0,
  };
}

/** The tool, prompt or resource a step names. */
function nameOf(step: ScriptStep): string | null {
  const p = step.params ?? {};
  const value = step.method === 'resources/read' ? p.uri : p.name;
  return typeof value === 'string' ? value : null;
}

function toolErrorText(result: Record<string, unknown>): string {
  const first = Array.isArray(result.content) ? result.content[0] : undefined;
  const text = first && typeof first === 'object' && 'text' in first ? (first as { text: unknown }).text : undefined;
  return typeof text === 'string' ? oneLine(text).slice(0, 120) : 'no text';
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function overBounds(script: Script): string | undefined {
  if (!Array.isArray(script.steps) || script.steps.length === 0) return 'a script has at least one step';
  if (script.steps.length > SCRIPT_MAX_STEPS) return `a script has at most ${SCRIPT_MAX_STEPS} steps`;
  for (const [i, s] of script.steps.entries()) {
    if ((s.expect?.length ?? 0) > SCRIPT_MAX_ASSERTIONS)
      return `step ${i + 1} has more than ${SCRIPT_MAX_ASSERTIONS} assertions`;
    if (JSON.stringify(s.params ?? {}).length > SCRIPT_MAX_PARAMS_CHARS)
      return `step ${i + 1}'s params are over ${SCRIPT_MAX_PARAMS_CHARS} characters as JSON`;
  }
  return undefined;
}

// How a replay judges an answer against the recorded one, and what a recording redacts: the rules
// on their own, including hostile shapes (deep, wide) that must end quickly with a reason.
import { describe, expect, it } from 'vitest';
import { COMPARE_MAX_STEPS, compareAnswer, parsePath, redactRecorded, secretsOf, sessionScript } from '../src';

const result = (r: Record<string, unknown>) => ({ kind: 'result' as const, result: r });
const judge = (before: Record<string, unknown>, now: Record<string, unknown>) =>
  compareAnswer({ result: before }, result(now), '', 200);

const tool = (over: Record<string, unknown> = {}) => ({
  name: 'create_order',
  inputSchema: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] },
  ...over,
});

describe('a replayed answer', () => {
  it('same, whatever its _meta', () => {
    expect(judge({ tools: [tool()], _meta: { a: 1 } }, { tools: [tool()], _meta: { b: 2 } }).verdict).toBe('same');
  });

  it('newer_equivalent: a field or an item added, anywhere in a list', () => {
    const added = judge({ tools: [tool()] }, { tools: [tool({ title: 'Order' }), tool({ name: 'cancel_order' })] });
    expect(added).toEqual({
      verdict: 'newer_equivalent',
      reason: 'everything recorded is still there; added 1 item in $.tools',
    });
    expect(judge({ tools: [tool()] }, { tools: [tool({ name: 'first' }), tool()] }).verdict).toBe('newer_equivalent');
    expect(judge({ a: { b: 1 } }, { a: { b: 1, c: 2 } }).reason).toBe(
      'everything recorded is still there; added $.a.c',
    );
  });

  it('broken: a required parameter added, an enum value removed, a type changed, an item gone', () => {
    const required = tool({ inputSchema: { ...tool().inputSchema, required: ['item', 'currency'] } });
    expect(judge({ tools: [tool()] }, { tools: [required] })).toEqual({
      verdict: 'broken',
      reason: '$.tools[0].inputSchema.required: now also requires ["currency"]',
    });
    expect(judge({ e: ['eur', 'usd'] }, { e: ['eur'] }).reason).toBe('$.e[1]: missing (was "usd")');
    expect(judge({ n: 1 }, { n: '1' }).reason).toBe('$.n: was number 1, now string "1"');
    expect(judge({ tools: [tool()] }, { tools: [] }).reason).toMatch(/^\$\.tools\[0\]: missing/);
    expect(judge({ content: [] }, { content: [], isError: true }).reason).toBe('the tool now answers isError: true');
    expect(judge({ 'odd key': 1 }, {}).reason).toBe('$["odd key"]: missing (was 1)');
  });

  it('protocol_error for a clean refusal, broken for a 5xx or no answer', () => {
    const refusal = { kind: 'error' as const, code: -32602, message: 'Tool create_order not found' };
    expect(compareAnswer({ result: {} }, refusal, '', 200)).toEqual({
      verdict: 'protocol_error',
      reason: 'the server now refuses: JSON-RPC error -32602 Tool create_order not found',
    });
    expect(compareAnswer({ result: {} }, refusal, '', 500).verdict).toBe('broken');
    expect(compareAnswer({ result: {} }, undefined, 'tools/list: the connection was refused', null)).toEqual({
      verdict: 'broken',
      reason: 'tools/list: the connection was refused',
    });
    expect(compareAnswer({ error: { code: -32602, message: 'x' } }, refusal, '', 200).verdict).toBe('same');
    expect(compareAnswer({ error: { code: -32601, message: 'x' } }, refusal, '', 200).verdict).toBe('protocol_error');
  });

  it('a hostile answer ends quickly: too deep or too wide to compare is broken, with the reason', () => {
    let deep: unknown = 'x';
    let deepNow: unknown = 'y';
    for (let i = 0; i < 10_000; i += 1) {
      deep = { a: deep };
      deepNow = { a: deepNow };
    }
    expect(judge({ d: deep }, { d: deepNow }).reason).toMatch(/nests deeper than 64 levels/);
    // Lists in lists whose items never match: the search stops at its budget.
    const row = Array.from({ length: 200 }, (_, i) => [i]);
    const started = Date.now();
    const wide = judge(
      { m: Array.from({ length: 200 }, () => row) },
      { m: Array.from({ length: 200 }, () => row.map(([i]) => [-i! - 1])) },
    );
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(wide.verdict).toBe('broken');
    expect(COMPARE_MAX_STEPS).toBe(1_000_000);
  });
});

describe('a recording', () => {
  it('redacts the credentials sent, secret-named values and credential-shaped strings', () => {
    const secrets = secretsOf({ authorization: 'Bearer tok-123456789' }, 'http://h/mcp?key=q-987654321');
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXZhbHVl';
    const out = redactRecorded(
      {
        arguments: { text: 'tok-123456789 and q-987654321', apiKey: 'anything', access_token: 'x', maxTokens: 5 },
        note: `jwt ${jwt}, sk-abcdefghijklmnopqrstu, AKIAABCDEFGHIJKLMNOP, Bearer abcdefghijk`,
      },
      secrets,
    );
    expect(out).toEqual({
      arguments: { text: '[redacted] and [redacted]', apiKey: '[redacted]', access_token: '[redacted]', maxTokens: 5 },
      note: 'jwt [redacted], [redacted], [redacted], [redacted]',
    });
  });

  it('turns into a script: the opening and failed calls left out, at most 16 steps', () => {
    const script = sessionScript({
      header: { session: 'mcp-fleet/1', url: 'http://h/mcp', revision: '2026-07-28', recordedAt: 'now' },
      exchanges: [
        { method: 'server/discover', result: {}, millis: 1, revision: '2026-07-28' },
        {
          method: 'prompts/get',
          params: { name: 'x' },
          error: { code: -32602, message: 'no' },
          millis: 1,
          revision: '2026-07-28',
        },
        ...Array.from({ length: 20 }, () => ({ method: 'ping', result: {}, millis: 3, revision: '2026-07-28' })),
      ],
    });
    expect(script.steps).toHaveLength(16);
    expect(script.steps[0]).toEqual({ method: 'ping', expect: [{ latencyMs: 1000 }] });
  });
});

describe('paths', () => {
  it('read the subset and nothing else', () => {
    expect(parsePath(`$.a['b c'][2]["d\\"e"]`)).toEqual({ ok: true, segments: ['a', 'b c', 2, 'd"e'] });
    expect(parsePath('$').ok).toBe(true);
    for (const bad of ['$..a', '$.a[*]', '$[?(@.a)]', 'a', `$${'.a'.repeat(40)}`, '$.a[-1]', '$.a.'])
      expect(parsePath(bad).ok).toBe(false);
  });
});

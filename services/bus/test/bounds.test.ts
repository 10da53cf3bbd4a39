// Bounded results: the largest result the bus's schema accepts, computed from the schema itself,
// fits NATS's default max_payload (1 MiB), and a result a single character over a bound is refused.
import { BOUNDS, CAUSE_NAMES, REVISIONS } from '@mcp-fleet/probe';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { encodeMessage, ResultSchema } from '../src';
import { RESULT_BATCH } from '../src/result-batches';
import { result } from './fixtures';

/** NATS's default max_payload; message headers (Nats-Msg-Id, ≤ 200 bytes of job id) count against it too. */
const NATS_DEFAULT_MAX_PAYLOAD = 1024 * 1024;
const HEADROOM = 4 * 1024;
/** The pattern of a string that holds printable ASCII only (SurfaceSnapshotSchema.body). */
const PRINTABLE_ASCII = '^[\\x20-\\x7e]*$';

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  maxLength?: number;
  pattern?: string;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  additionalProperties?: unknown;
};

/** Bytes of `JSON.stringify(value)` in UTF-8. */
const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/**
 * The most bytes a value valid under `schema` can take as JSON: every optional field present, every
 * string at its maxLength with each UTF-16 unit at its costliest (a control character or lone
 * surrogate is escaped as \uXXXX: 6 bytes), every array full. A string or array without a maximum
 * has no bound: Infinity, and `path` says where.
 */
function worstCase(schema: JsonSchema, path: string, unbounded: string[]): number {
  if (schema.const !== undefined) return bytes(schema.const);
  if (schema.enum) return Math.max(...schema.enum.map(bytes));
  const options = schema.anyOf ?? schema.oneOf;
  if (options) return Math.max(...options.map((o) => worstCase(o, path, unbounded)));
  if (Array.isArray(schema.type))
    return Math.max(...schema.type.map((type) => worstCase({ ...schema, type }, path, unbounded)));
  switch (schema.type) {
    case 'null':
      return 4;
    case 'boolean':
      return 5;
    case 'integer':
      return Math.max(String(schema.minimum ?? -Number.MAX_SAFE_INTEGER).length, String(schema.maximum ?? 0).length);
    case 'number':
      // -1.7976931348623157e+308, the longest a JSON number JSON.stringify writes.
      return String(-Number.MAX_VALUE).length;
    case 'string':
      if (schema.maxLength === undefined) {
        unbounded.push(path);
        return Number.POSITIVE_INFINITY;
      }
      // Printable ASCII only (a surface's canonical JSON): at most 2 bytes a character (\" and \\).
      if (schema.pattern === PRINTABLE_ASCII) return 2 + 2 * schema.maxLength;
      return 2 + 6 * schema.maxLength;
    case 'array': {
      if (schema.maxItems === undefined) {
        unbounded.push(path);
        return Number.POSITIVE_INFINITY;
      }
      const item = worstCase(schema.items ?? {}, `${path}[]`, unbounded);
      return 2 + schema.maxItems * item + Math.max(0, schema.maxItems - 1);
    }
    case 'object': {
      if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
        unbounded.push(`${path}.*`);
        return Number.POSITIVE_INFINITY;
      }
      const entries = Object.entries(schema.properties ?? {});
      const fields = entries.map(([key, value]) => bytes(key) + 1 + worstCase(value, `${path}.${key}`, unbounded));
      return 2 + fields.reduce((a, b) => a + b, 0) + Math.max(0, entries.length - 1);
    }
    default:
      unbounded.push(`${path} (${JSON.stringify(schema.type)})`);
      return Number.POSITIVE_INFINITY;
  }
}

describe('bounded results', () => {
  const schema = z.toJSONSchema(ResultSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;

  it('the largest result the schema accepts fits NATS default max_payload', () => {
    const unbounded: string[] = [];
    const worst = worstCase(schema, '$', unbounded);
    // Every string and array of a result has a maximum.
    expect(unbounded).toEqual([]);
    const detection = worstCase(schema.properties!.detection!, '$.detection', unbounded);
    const revision = worstCase(schema.properties!.detection!.anyOf![0]!.properties!.revisions!.items!, '$', unbounded);
    console.log(
      `worst-case result: ${worst} bytes (a detection ${detection}: ${REVISIONS.length} revisions × ${revision} + the rest); NATS max_payload ${NATS_DEFAULT_MAX_PAYLOAD}`,
    );
    expect(detection).toBeGreaterThan(REVISIONS.length * revision);
    expect(worst).toBeLessThan(NATS_DEFAULT_MAX_PAYLOAD - HEADROOM);
  });

  it("a batch of results (result-batches.ts) fits it too, whatever its results' characters", () => {
    // A batch holds less than maxChars UTF-16 units of JSON, each at most three UTF-8 bytes; a
    // result that alone is maxChars or more is sent alone (the test above).
    expect(RESULT_BATCH.maxChars * 3).toBeLessThan(NATS_DEFAULT_MAX_PAYLOAD - HEADROOM);
  });

  it('the computation is not too kind: a result made of maximal strings is accepted and within it', () => {
    // Each string at its bound, each character a control character (6 bytes as JSON).
    const s = (max: number) => '\u0001'.repeat(max);
    const evidence = {
      status: 599,
      contentType: s(BOUNDS.header),
      bodyPreview: s(BOUNDS.preview),
      jsonRpcErrorCode: -32_000,
      jsonRpcErrorMessage: s(BOUNDS.preview),
      millis: 20_000,
      reachabilityFailure: s(BOUNDS.label),
      message: s(BOUNDS.message),
    };
    const serverInfo = { name: s(BOUNDS.name), version: s(BOUNDS.version), title: s(BOUNDS.name) };
    const big = result('eu-west', {
      kind: 'detection',
      run: null,
      detection: {
        outcome: 'RATE_LIMITED',
        // The longest cause (the schema does not tie causes to outcomes: the bytes are the point here).
        cause: 'auth_required',
        retryAfterHeader: s(BOUNDS.header),
        newestSupported: null,
        serverInfo,
        requests: 8,
        millis: 20_000,
        revisions: REVISIONS.map((r) => ({
          revision: r.revision,
          generation: s(BOUNDS.label),
          supported: false,
          note: s(BOUNDS.label),
          sentence: s(BOUNDS.message),
          serverInfo,
          evidence,
        })),
      },
    });
    const { data } = encodeMessage(ResultSchema, big, 'result');
    const unbounded: string[] = [];
    expect(Buffer.byteLength(data)).toBeLessThanOrEqual(worstCase(schema, '$', unbounded));
    expect(Buffer.byteLength(data)).toBeGreaterThan(REVISIONS.length * 6 * 2 * BOUNDS.message);
  });

  it('refuses a result one character over any bound, and a sixth revision', () => {
    const over = (max: number) => 'x'.repeat(max + 1);
    const run = result('eu-west').run!;
    const detection = {
      outcome: 'NONE' as const,
      retryAfterHeader: null,
      newestSupported: null,
      serverInfo: null,
      requests: 5,
      millis: 10,
      revisions: REVISIONS.map((r) => ({
        revision: r.revision,
        generation: r.generation,
        supported: false,
        note: r.note,
        sentence: 'not supported',
      })),
    };
    const refused = [
      { run: { ...run, message: over(BOUNDS.message) } },
      { run: { ...run, negotiated: over(BOUNDS.revision) } },
      { run: { ...run, serverInfo: { name: over(BOUNDS.name), version: '1' } } },
      { run: { ...run, serverInfo: { name: 'x', version: over(BOUNDS.version) } } },
      {
        run: { ...run, assertion: { name: 'mcp.protocol.revision', expected: 'x', actual: over(64), message: 'x' } },
      },
      {
        run: {
          ...run,
          evidence: {
            status: 400,
            contentType: 'application/json',
            bodyPreview: null,
            jsonRpcErrorCode: -32600,
            jsonRpcErrorMessage: over(BOUNDS.preview),
            millis: 1,
            reachabilityFailure: null,
            message: 'x',
          },
        },
      },
      { kind: 'detection' as const, run: null, detection: { ...detection, retryAfterHeader: over(BOUNDS.header) } },
      {
        kind: 'detection' as const,
        run: null,
        detection: {
          ...detection,
          revisions: detection.revisions.map((r) => ({ ...r, sentence: over(BOUNDS.message) })),
        },
      },
      {
        kind: 'detection' as const,
        run: null,
        detection: { ...detection, revisions: [...detection.revisions, detection.revisions[0]!] },
      },
      // A detection's cause is one of probe's closed set, never a publisher's own words.
      { kind: 'detection' as const, run: null, detection: { ...detection, cause: 'the server is fine, trust me' } },
      { kind: 'detection' as const, run: null, detection: { ...detection, cause: over(BOUNDS.message) } },
      { agent: over(200) },
      { finishedAt: `2026-01-01T00:00:00.${'1'.repeat(60)}Z` },
    ];
    for (const overrides of refused) {
      const parsed = ResultSchema.safeParse(result('eu-west', overrides as never));
      expect(parsed.success, JSON.stringify(overrides).slice(0, 120)).toBe(false);
    }
    // At the bounds exactly, the same fields pass.
    const at = (max: number) => 'x'.repeat(max);
    expect(ResultSchema.safeParse(result('eu-west', { run: { ...run, message: at(BOUNDS.message) } })).success).toBe(
      true,
    );
    expect(
      ResultSchema.safeParse(result('eu-west', { kind: 'detection', run: null, detection: detection as never }))
        .success,
    ).toBe(true);
    // Every cause passes and travels; a result from an agent older than the field reads as none.
    for (const cause of CAUSE_NAMES) {
      const parsed = ResultSchema.parse(
        result('eu-west', { kind: 'detection', run: null, detection: { ...detection, cause } as never }),
      );
      expect(parsed.detection?.cause).toBe(cause);
    }
    const older = ResultSchema.parse(
      result('eu-west', { kind: 'detection', run: null, detection: detection as never }),
    );
    expect(older.detection?.cause).toBeNull();
  });
});

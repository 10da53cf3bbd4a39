// The canonical form of a surface, reading a body back (hostile input), and the classified diff.
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  diffSurfaces,
  SURFACE_MAX_CHARS,
  type Surface,
  SurfaceBodyError,
  type SurfaceTool,
  snapshotOf,
  surfaceFromBody,
} from '../src/index';

const base = (over: Partial<Surface> = {}): Surface => ({
  era: 'legacy',
  revision: '2025-11-25',
  serverInfo: { name: 'orders', version: '1.0.0' },
  capabilities: { tools: { listChanged: true }, resources: {}, prompts: {} },
  tools: [
    {
      name: 'create_order',
      description: 'Create an order',
      inputSchema: {
        type: 'object',
        properties: {
          item: { type: 'string' },
          quantity: { type: ['integer', 'string'] },
          currency: { type: 'string', enum: ['EUR', 'USD'] },
          address: {
            type: 'object',
            properties: { city: { type: 'string' }, zip: { type: 'string' } },
            required: ['city'],
          },
        },
        required: ['item'],
      },
      outputSchema: {
        type: 'object',
        properties: { id: { type: 'string' }, total: { type: 'number' } },
        required: ['id'],
      },
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    { name: 'get_order', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
  ],
  resources: [{ uri: 'file:///orders.csv', name: 'orders', mimeType: 'text/csv' }],
  resourceTemplates: [{ uriTemplate: 'orders://{id}', name: 'order' }],
  prompts: [{ name: 'summarize', arguments: [{ name: 'id', required: true }, { name: 'tone' }] }],
  truncated: false,
  ...over,
});

/** A deep copy to mutate for "after". */
const clone = (s: Surface): Surface => JSON.parse(JSON.stringify(s)) as Surface;
const tool = (s: Surface, name: string): SurfaceTool => s.tools.find((t) => t.name === name)!;
// biome-ignore lint/suspicious/noExplicitAny: tests reach into free-form schemas
const schema = (s: Surface, name: string): any => tool(s, name).inputSchema;

describe('canonicalJson', () => {
  it('sorts keys at every level, drops spaces and undefined, and escapes everything past printable ASCII', () => {
    const text = canonicalJson({ b: 1, a: { d: [3, { z: 1, y: undefined }], c: 'é😀\u007f' }, e: undefined });
    expect(text).toBe('{"a":{"c":"\\u00e9\\ud83d\\ude00\\u007f","d":[3,{"z":1}]},"b":1}');
    expect(text).toMatch(/^[\x20-\x7e]*$/);
    expect(JSON.parse(text)).toEqual({ a: { c: 'é😀\u007f', d: [3, { z: 1 }] }, b: 1 });
  });

  it('is the same text whatever order keys were inserted in', () => {
    expect(canonicalJson({ x: 1, y: { b: 2, a: 1 } })).toBe(canonicalJson({ y: { a: 1, b: 2 }, x: 1 }));
  });

  it('escapes control characters and lone surrogates', () => {
    const text = canonicalJson({ s: 'a\u0000b\nc\ud800' });
    expect(text).toMatch(/^[\x20-\x7e]*$/);
    expect(JSON.parse(text).s).toBe('a\u0000b\nc\ud800');
  });

  it('refuses a cycle or a value nested too deep instead of overflowing the stack', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/nested deeper/);
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(() => canonicalJson(deep)).toThrow(/nested deeper/);
  });
});

describe('snapshotOf and surfaceFromBody', () => {
  it('hashes the canonical body, and reads it back to an equal surface with an equal hash', () => {
    const s = base({ serverInfo: { name: 'Bestellungen – ß', version: '1.0.0' } });
    const snap = snapshotOf(s);
    expect(snap.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(snap.body).toMatch(/^[\x20-\x7e]*$/);
    expect(snap).toMatchObject({ era: 'legacy', revision: '2025-11-25', truncated: false });
    const back = surfaceFromBody(snap.body);
    expect(back).toEqual(s);
    expect(snapshotOf(back).hash).toBe(snap.hash);
    // As the database gives it back (jsonb: parsed, keys reordered).
    expect(snapshotOf(surfaceFromBody(JSON.parse(snap.body))).hash).toBe(snap.hash);
  });

  it('gives a different hash for any change', () => {
    const after = clone(base());
    tool(after, 'get_order').description = 'x';
    expect(snapshotOf(after).hash).not.toBe(snapshotOf(base()).hash);
  });

  it('refuses a surface whose body is over the bound', () => {
    const big = base({ tools: [{ name: 't', description: 'x'.repeat(SURFACE_MAX_CHARS), inputSchema: {} }] });
    expect(() => snapshotOf(big)).toThrow(/more than 90000/);
  });

  it('names the bad field of a hostile body', () => {
    const body = JSON.parse(snapshotOf(base()).body);
    const bad = (mutate: (b: Record<string, unknown>) => void) => {
      const b = JSON.parse(JSON.stringify(body));
      mutate(b);
      return () => surfaceFromBody(JSON.stringify(b));
    };
    expect(() => surfaceFromBody('{not json')).toThrow(SurfaceBodyError);
    expect(() => surfaceFromBody('[]')).toThrow('surface body: surface must be an object');
    expect(() => surfaceFromBody(42)).toThrow(/must be an object/);
    expect(() => surfaceFromBody('x'.repeat(SURFACE_MAX_CHARS + 1))).toThrow(/more than 90000/);
    expect(bad((b) => (b.era = 'ancient'))).toThrow(/era must be legacy or modern/);
    expect(bad((b) => (b.tools = 'none'))).toThrow(/surface.tools must be a list/);
    expect(bad((b) => ((b.tools as unknown[])[1] = { name: 3, inputSchema: {} }))).toThrow(
      /surface.tools\[1\].name must be a string/,
    );
    expect(bad((b) => delete (b.tools as Record<string, unknown>[])[0]!.inputSchema)).toThrow(/inputSchema is missing/);
    expect(
      bad((b) => ((b.prompts as Record<string, unknown>[])[0]!.arguments = [{ name: 'x', required: 'yes' }])),
    ).toThrow(/arguments\[0\].required must be true or false/);
    expect(bad((b) => (b.truncated = 'no'))).toThrow(/truncated must be true or false/);
    expect(bad((b) => (b.capabilities = null))).toThrow(/capabilities must be an object/);
    let deep = '1';
    for (let i = 0; i < 200; i++) deep = `[${deep}]`;
    expect(() =>
      surfaceFromBody(
        `{"era":"modern","revision":"2026-07-28","serverInfo":null,"capabilities":{},"tools":[{"name":"t","inputSchema":${deep}}],"resources":[],"resourceTemplates":[],"prompts":[],"truncated":false}`,
      ),
    ).toThrow(/nested deeper/);
  });

  it('keeps __proto__ and constructor as plain keys: nothing reaches a prototype', () => {
    const body =
      '{"era":"modern","revision":"2026-07-28","serverInfo":null,"capabilities":{"__proto__":{"polluted":true}},' +
      '"tools":[{"name":"t","inputSchema":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}},' +
      '"annotations":{"__proto__":{"readOnlyHint":true}}}],"resources":[],"resourceTemplates":[],"prompts":[],"truncated":false,"__proto__":{"polluted":true}}';
    const s = surfaceFromBody(body);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((s as unknown as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(s.capabilities)).toBeNull();
    expect(Object.keys(s.capabilities)).toEqual(['__proto__']);
    expect((s.tools[0]!.annotations as Record<string, unknown>).readOnlyHint).toBeUndefined();
    expect(Object.keys(s.tools[0]!.inputSchema as object)).toEqual(['__proto__', 'constructor']);
    // The copy canonicalizes to the same text as the body had.
    expect(canonicalJson(s.capabilities)).toBe('{"__proto__":{"polluted":true}}');
  });
});

describe('diffSurfaces', () => {
  const diff = (mutate: (after: Surface) => void, before = base()) => {
    const after = clone(before);
    mutate(after);
    return diffSurfaces(before, after);
  };

  it('finds nothing between equal surfaces', () => {
    expect(diffSurfaces(base(), clone(base()))).toEqual([]);
  });

  it('calls a parameter made required breaking, with the path and the message the history reads', () => {
    const changes = diff((a) => schema(a, 'create_order').required.push('currency'));
    expect(changes).toEqual([
      {
        severity: 'breaking',
        kind: 'tool',
        name: 'create_order',
        change: 'required_added',
        message: 'tool `create_order`: parameter `currency` now required',
        path: 'inputSchema.properties.currency',
      },
    ]);
  });

  it('classifies removals of tools, prompts, resources, templates and capabilities as breaking', () => {
    const changes = diff((a) => {
      a.tools = a.tools.filter((t) => t.name !== 'get_order');
      a.prompts = [];
      a.resources = [];
      a.resourceTemplates = [];
      delete a.capabilities.prompts;
    });
    expect(changes.map((c) => [c.severity, c.kind, c.name, c.change, c.message])).toEqual([
      ['breaking', 'capability', 'prompts', 'removed', 'capability `prompts` removed'],
      ['breaking', 'tool', 'get_order', 'removed', 'tool `get_order` removed'],
      ['breaking', 'resource', 'file:///orders.csv', 'removed', 'resource `file:///orders.csv` removed'],
      ['breaking', 'resource_template', 'orders://{id}', 'removed', 'resource template `orders://{id}` removed'],
      ['breaking', 'prompt', 'summarize', 'removed', 'prompt `summarize` removed'],
    ]);
  });

  it('classifies additions as info', () => {
    const changes = diff((a) => {
      a.tools.push({ name: 'zap', inputSchema: { type: 'object' } });
      a.resources.push({ uri: 'file:///z', name: 'z' });
      a.resourceTemplates.push({ uriTemplate: 'z://{x}', name: 'z' });
      a.prompts.push({ name: 'zz' });
      a.capabilities.logging = {};
      schema(a, 'create_order').properties.note = { type: 'string' };
      schema(a, 'create_order').properties.currency.enum.push('GBP');
      (tool(a, 'create_order').outputSchema as { properties: Record<string, unknown> }).properties.eta = {
        type: 'string',
      };
      a.serverInfo = { name: 'orders', version: '1.1.0' };
    });
    expect(changes.every((c) => c.severity === 'info')).toBe(true);
    expect(changes.map((c) => c.message)).toEqual([
      'capability `logging` added',
      'tool `create_order`: parameter `currency` now also accepts "GBP"',
      'tool `create_order`: optional parameter `note` added',
      'tool `create_order`: output field `eta` added',
      'tool `zap` added',
      'resource `file:///z` added',
      'resource template `z://{x}` added',
      'prompt `zz` added',
      'server version "1.0.0" → "1.1.0"',
    ]);
  });

  it('calls narrowed or changed types and removed enum values breaking, widened types info', () => {
    const changes = diff((a) => {
      const p = schema(a, 'create_order').properties;
      p.quantity.type = 'integer'; // ["integer","string"] → integer
      p.item.type = 'number'; // string → number
      p.currency.enum = ['EUR'];
      p.address.properties.zip.type = ['string', 'null'];
    });
    expect(changes.map((c) => [c.severity, c.change, c.path, c.message])).toEqual([
      [
        'info',
        'type_widened',
        'inputSchema.properties.address.properties.zip.type',
        'tool `create_order`: parameter `address.zip` type widened from "string" to ["string","null"]',
      ],
      [
        'breaking',
        'enum_removed',
        'inputSchema.properties.currency.enum',
        'tool `create_order`: parameter `currency` no longer accepts "USD"',
      ],
      [
        'breaking',
        'type_changed',
        'inputSchema.properties.item.type',
        'tool `create_order`: parameter `item` type changed from "string" to "number"',
      ],
      [
        'breaking',
        'type_narrowed',
        'inputSchema.properties.quantity.type',
        'tool `create_order`: parameter `quantity` type narrowed from ["integer","string"] to "integer"',
      ],
    ]);
    expect(
      diff(
        (a) => (schema(a, 'get_order').properties.id.type = 'integer'),
        (() => {
          const b = base();
          schema(b, 'get_order').properties.id.type = 'number';
          return b;
        })(),
      )[0],
    ).toMatchObject({ severity: 'breaking', change: 'type_narrowed' });
  });

  it('recurses into nested object properties: a nested parameter made required, or added required, breaks', () => {
    const changes = diff((a) => {
      const addr = schema(a, 'create_order').properties.address;
      addr.required.push('zip');
      addr.properties.country = { type: 'string' };
      addr.required.push('country');
    });
    expect(changes.map((c) => [c.severity, c.path, c.message])).toEqual([
      [
        'breaking',
        'inputSchema.properties.address.properties.country',
        'tool `create_order`: required parameter `address.country` added',
      ],
      [
        'breaking',
        'inputSchema.properties.address.properties.zip',
        'tool `create_order`: parameter `address.zip` now required',
      ],
    ]);
  });

  it('calls an optional parameter removed a warning, and breaking when the schema closes its properties', () => {
    expect(diff((a) => delete schema(a, 'create_order').properties.currency)).toEqual([
      expect.objectContaining({
        severity: 'warning',
        change: 'parameter_removed',
        message: 'tool `create_order`: optional parameter `currency` removed',
      }),
    ]);
    const closed = base();
    schema(closed, 'create_order').additionalProperties = false;
    expect(diff((a) => delete schema(a, 'create_order').properties.currency, closed)[0]).toMatchObject({
      severity: 'breaking',
      change: 'parameter_removed',
    });
  });

  it('calls description, title and annotation changes warnings, saying from → to', () => {
    const changes = diff((a) => {
      const t = tool(a, 'create_order');
      t.description = 'Create an order (v2)';
      t.title = 'Create';
      t.annotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
      schema(a, 'get_order').properties.id.description = 'The order id';
      a.resources[0]!.mimeType = 'application/json';
    });
    expect(changes.every((c) => c.severity === 'warning')).toBe(true);
    expect(changes.map((c) => c.message)).toEqual([
      'tool `create_order`: title added',
      'tool `create_order`: description changed',
      'tool `create_order`: annotation `idempotentHint` absent → true',
      'tool `create_order`: annotation `readOnlyHint` false → true',
      'tool `get_order`: parameter `id` description added',
      'resource `file:///orders.csv`: MIME type changed',
    ]);
    expect(changes[3]!.path).toBe('annotations.readOnlyHint');
  });

  it('calls an output field removed breaking', () => {
    const changes = diff((a) => {
      delete (tool(a, 'create_order').outputSchema as { properties: Record<string, unknown> }).properties.total;
      delete tool(a, 'get_order').outputSchema;
    });
    expect(changes).toEqual([
      expect.objectContaining({
        severity: 'breaking',
        change: 'output_removed',
        message: 'tool `create_order`: output field `total` removed',
        path: 'outputSchema.properties.total',
      }),
    ]);
    expect(diff((a) => delete tool(a, 'create_order').outputSchema)[0]).toMatchObject({
      severity: 'breaking',
      change: 'output_removed',
    });
  });

  it('classifies prompt argument changes: a new required argument breaks, the rest warn or inform', () => {
    const changes = diff((a) => {
      a.prompts[0]!.arguments = [{ name: 'id' }, { name: 'lang', required: true }, { name: 'style' }];
    });
    expect(changes.map((c) => [c.severity, c.message])).toEqual([
      ['warning', 'prompt `summarize`: argument `id` now optional'],
      ['warning', 'prompt `summarize`: argument `tone` removed'],
      ['breaking', 'prompt `summarize`: required argument `lang` added'],
      ['info', 'prompt `summarize`: optional argument `style` added'],
    ]);
  });

  it('calls a capability sub-flag change a warning', () => {
    expect(diff((a) => (a.capabilities.tools = { listChanged: false }))).toEqual([
      expect.objectContaining({ severity: 'warning', kind: 'capability', name: 'tools', path: 'tools.listChanged' }),
    ]);
  });

  it('does not call items beyond a truncated surface’s cut removed, nor ones beyond the old cut added', () => {
    const before = base();
    const cutAfter = clone(before);
    cutAfter.tools = cutAfter.tools.slice(0, 1); // get_order is beyond the cut
    cutAfter.truncated = true;
    expect(diffSurfaces(before, cutAfter)).toEqual([]);
    // An item before the cut that is gone is still removed.
    const cutAfter2 = clone(before);
    cutAfter2.tools = cutAfter2.tools.slice(1);
    cutAfter2.truncated = true;
    expect(diffSurfaces(before, cutAfter2).map((c) => c.message)).toEqual(['tool `create_order` removed']);
    // And from a truncated surface to a whole one, items past the old cut are not news.
    expect(diffSurfaces(cutAfter, before)).toEqual([]);
  });

  it('does not compare inside a schema or description the reader cut', () => {
    const after = clone(base());
    tool(after, 'create_order').inputSchema = { 'x-mcp-fleet-cut': 12345 };
    tool(after, 'create_order').description = 'Create an…';
    after.truncated = true;
    expect(diffSurfaces(base(), after)).toEqual([]);
    tool(after, 'create_order').description = 'Delete an…';
    expect(diffSurfaces(base(), after).map((c) => c.message)).toEqual(['tool `create_order`: description changed']);
  });

  it('stops at a bounded depth on a deeply nested schema and still reports that it changed', () => {
    const nest = (leaf: string) => {
      let s: Record<string, unknown> = { type: leaf };
      for (let i = 0; i < 20; i++) s = { type: 'object', properties: { n: s } };
      return s;
    };
    const before = base({ tools: [{ name: 'deep', inputSchema: nest('string') }] });
    const after = base({ tools: [{ name: 'deep', inputSchema: nest('number') }] });
    const changes = diffSurfaces(before, after);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ severity: 'warning', change: 'schema_changed' });
    expect(changes[0]!.message).toMatch(/deeper than 6 levels/);
  });

  it('quotes hostile names bounded', () => {
    const long = 'x'.repeat(5000);
    const changes = diffSurfaces(base(), base({ tools: [...base().tools, { name: long, inputSchema: {} }] }));
    expect(changes[0]!.message.length).toBeLessThan(200);
    expect(changes[0]!.name).toBe(long);
  });
});

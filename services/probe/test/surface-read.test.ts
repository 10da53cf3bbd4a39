// Reading surfaces from real servers (fleet-sim): every generation's connection, paging, both eras
// of one server, and hostile lists that must never throw nor leave an unstorable snapshot.
import {
  CATALOGUE_PROMPT,
  CATALOGUE_RESOURCE_URI,
  CATALOGUE_TOOL_NAMES,
  DUAL_ERA_CHANGED_TOOL,
  DUAL_ERA_LEGACY_ONLY_TOOL,
  HOSTILE_SURFACE_BIG_TOOLS,
} from '@mcp-fleet/fleet-sim';
import { describe, expect, it } from 'vitest';
import {
  diffSurfaces,
  ProbeContext,
  readSurface,
  readSurfaceAt,
  readSurfaces,
  SURFACE_MAX_CHARS,
  SURFACE_READ_MAX_REQUESTS,
  surfaceFromBody,
} from '../src';
import { connectModern } from '../src/conformance/connection';
import { useSim } from './use-sim';

const sim = useSim({
  only: [
    'catalogue',
    'modern',
    'modern-only',
    'sessions-2025-11-25',
    'legacy-sse',
    'dual-era-diff',
    'hostile-surface',
    'closed',
  ],
});
const url = (name: string) => sim().target(name).url;
const PRINTABLE = /^[\x20-\x7e]*$/;

describe('readSurfaceAt', () => {
  it('reads every page of a paged tools/list, the resource and the prompt, sorted by key', async () => {
    const read = await readSurfaceAt(url('catalogue'), '2026-07-28');
    expect(read).toMatchObject({ era: 'modern', revision: '2026-07-28' });
    expect(read.message).toBe('5 tools, 1 resource, 0 resource templates, 1 prompt');
    const s = surfaceFromBody(read.snapshot!.body);
    expect(s.tools.map((t) => t.name)).toEqual([...CATALOGUE_TOOL_NAMES].sort());
    expect(s.tools[0]!.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
    expect(s.resources.map((r) => r.uri)).toEqual([CATALOGUE_RESOURCE_URI]);
    expect(s.prompts).toEqual([
      expect.objectContaining({
        name: CATALOGUE_PROMPT,
        arguments: [expect.objectContaining({ name: 'text', required: true })],
      }),
    ]);
    expect(s.serverInfo?.name).toBe('catalogue');
    expect(Object.keys(s.capabilities)).toEqual(expect.arrayContaining(['tools', 'resources', 'prompts']));
    expect(read.snapshot!.truncated).toBe(false);
    // Three pages of tools, plus discover, resources, templates, prompts.
    expect(
      sim()
        .requests('catalogue')
        .filter((r) => r.jsonRpcMethod === 'tools/list'),
    ).toHaveLength(3);
    expect(read.requests).toBe(sim().requests('catalogue').length);
  });

  it('reads the same surface twice to the same hash, and in a legacy revision too', async () => {
    const a = await readSurfaceAt(url('catalogue'), '2026-07-28');
    const b = await readSurfaceAt(url('catalogue'), '2026-07-28');
    expect(a.snapshot!.hash).toBe(b.snapshot!.hash);
    const legacy = await readSurfaceAt(url('catalogue'), '2025-11-25');
    expect(legacy).toMatchObject({ era: 'legacy', revision: '2025-11-25' });
    // Same tools in both eras: only era and revision differ.
    expect(diffSurfaces(surfaceFromBody(a.snapshot!.body), surfaceFromBody(legacy.snapshot!.body))).toEqual([]);
  });

  it('reads over a sessions connection answered on an event stream, and over HTTP+SSE', async () => {
    const sessions = await readSurfaceAt(url('sessions-2025-11-25'), '2025-11-25');
    expect(sessions.snapshot).not.toBeNull();
    const s = surfaceFromBody(sessions.snapshot!.body);
    expect(s.tools.map((t) => t.name)).toEqual(['echo']);
    expect(s.tools[0]!.inputSchema).toMatchObject({ properties: { text: { type: 'string' } }, required: ['text'] });
    // The session is closed when the read is done.
    expect(
      sim()
        .requests('sessions-2025-11-25')
        .some((r) => r.method === 'DELETE'),
    ).toBe(true);

    const sse = await readSurfaceAt(url('legacy-sse'), '2024-11-05');
    expect(sse).toMatchObject({ era: 'legacy', revision: '2024-11-05' });
    expect(surfaceFromBody(sse.snapshot!.body).tools.map((t) => t.name)).toEqual(['echo']);
  });

  it('fails cleanly when the server does not speak the pinned revision or cannot be reached', async () => {
    const notSpoken = await readSurfaceAt(url('modern-only'), '2025-11-25');
    expect(notSpoken.snapshot).toBeNull();
    expect(notSpoken.revision).toBeNull();
    expect(notSpoken.message.length).toBeGreaterThan(0);
    const downgraded = await readSurfaceAt(url('sessions-2025-11-25'), '2026-07-28');
    expect(downgraded).toMatchObject({ era: 'modern', snapshot: null });
    const closed = await readSurfaceAt(url('closed'), '2026-07-28', { timeoutMs: 2000 });
    expect(closed.snapshot).toBeNull();
    expect(closed.message).toMatch(/refused|connect/i);
  });
});

describe('readSurfaces', () => {
  it('reads one surface per era, and a dual-era server serves different ones', async () => {
    const reads = await readSurfaces(url('dual-era-diff'));
    expect(reads.map((r) => [r.era, r.revision])).toEqual([
      ['legacy', '2025-11-25'],
      ['modern', '2026-07-28'],
    ]);
    const [legacy, modern] = reads.map((r) => surfaceFromBody(r.snapshot!.body));
    expect(legacy!.tools.map((t) => t.name)).toContain(DUAL_ERA_LEGACY_ONLY_TOOL);
    expect(modern!.tools.map((t) => t.name)).not.toContain(DUAL_ERA_LEGACY_ONLY_TOOL);
    const changes = diffSurfaces(legacy!, modern!);
    expect(changes.map((c) => [c.severity, c.name, c.change])).toEqual([
      ['breaking', DUAL_ERA_LEGACY_ONLY_TOOL, 'removed'],
      ['breaking', DUAL_ERA_CHANGED_TOOL, 'required_added'],
    ]);
  });

  it('gives a read without a snapshot for an era the server does not speak', async () => {
    const reads = await readSurfaces(url('modern-only'));
    expect(reads[0]).toMatchObject({ era: 'legacy', snapshot: null, revision: null });
    expect(reads[1]!.snapshot).not.toBeNull();
  });
});

describe('hostile surfaces', () => {
  it('never throws, keeps what it can, and leaves a storable bounded snapshot marked truncated', async () => {
    for (const revision of ['2025-11-25', '2026-07-28'] as const) {
      const read = await readSurfaceAt(url('hostile-surface'), revision);
      expect(read.snapshot).not.toBeNull();
      const snap = read.snapshot!;
      expect(snap.truncated).toBe(true);
      expect(snap.body).toMatch(PRINTABLE);
      expect(snap.body.length).toBeLessThanOrEqual(SURFACE_MAX_CHARS);
      // No NUL and no lone surrogate survive (Postgres jsonb refuses both).
      expect(snap.body).not.toMatch(/\\u0000|\\ud800(?!\\udc)/);
      expect(read.requests).toBeLessThanOrEqual(SURFACE_READ_MAX_REQUESTS);
      const s = surfaceFromBody(snap.body);
      const names = s.tools.map((t) => t.name);
      // Non-objects and a non-string name are left out; a name listed twice is kept once (the first).
      expect(names).toHaveLength(6);
      expect(s.tools.find((t) => t.name === 'dup')!.description).toBe('first');
      expect(names).toContain('nul\ufffdname');
      expect(names.find((n) => n.startsWith('xxx'))!.length).toBeLessThanOrEqual(256);
      expect(s.tools.find((t) => t.name === 'wordy')!.description!.length).toBeLessThanOrEqual(4000);
      expect(s.tools.find((t) => t.name === 'deep')!.inputSchema).toBeDefined();
      expect(Object.keys((s.tools.find((t) => t.name === 'proto')!.inputSchema as object) ?? {})).toContain(
        '__proto__',
      );
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      // Each failed list is named.
      expect(read.message).toMatch(/cursor loops/);
      expect(read.message).toMatch(/resources\/list/);
      expect(read.message).toMatch(/resources\/templates\/list: JSON-RPC error -32603/);
      expect(read.message).toMatch(/prompts\/list: no prompts list/);
      expect(read.message).toMatch(/listed twice/);
    }
  });

  it('cuts a surface larger than a snapshot to fit, keeping the first tools by name', async () => {
    const big = url('hostile-surface').replace(/\/mcp$/, '/big');
    const read = await readSurfaceAt(big, '2026-07-28');
    const snap = read.snapshot!;
    expect(snap.truncated).toBe(true);
    expect(snap.body.length).toBeLessThanOrEqual(SURFACE_MAX_CHARS);
    expect(snap.body.length).toBeGreaterThan(SURFACE_MAX_CHARS * 0.9);
    const s = surfaceFromBody(snap.body);
    expect(s.tools.length).toBeGreaterThan(50);
    expect(s.tools.length).toBeLessThan(HOSTILE_SURFACE_BIG_TOOLS);
    expect(s.tools[0]!.name).toBe('tool_0000');
    expect(read.message).toMatch(/cut to fit a snapshot/);
    // A diff against the whole surface read before (truncated too) does not call the cut tools removed.
    const again = await readSurfaceAt(big, '2026-07-28');
    expect(diffSurfaces(s, surfaceFromBody(again.snapshot!.body))).toEqual([]);
  });

  it('readSurface over an open connection never throws and stays within the connection budget', async () => {
    const ctx = new ProbeContext(new URL(url('hostile-surface')), {}, { maxRequests: 3, totalMs: 10_000 });
    const connected = await connectModern(ctx, '2026-07-28');
    expect(connected.ok).toBe(true);
    if (!connected.ok) return;
    const s = await readSurface(connected.connection);
    expect(ctx.requests).toBe(3);
    expect(s.truncated).toBe(true);
  });
});

// Cross-era checks (seed 000, "Cross-era checks"): a server that speaks both eras should serve the
// same thing in each. Connect once per protocol (default: every revision detection finds
// supported), read each one's surface, and compare them against the first protocol that connected:
//
//   cross_era_connect        MUST    every protocol connects
//   tools_match              MUST    the same tool names
//   tool_definitions_match   MUST    each tool's input schema, output schema and annotations
//   resources_match          MUST    the same resource uris
//   resource_templates_match MUST    the same resource templates
//   prompts_match            MUST    the same prompts (names and arguments)
//   capabilities_match       SHOULD  the same capabilities
//   auto_picks_modern        SHOULD  a newest-supported handshake negotiates 2026-07-28 when the server speaks it
//
// The seed names capabilities and auto as SHOULD; what a client may call (tools, resources,
// prompts) is what "serve the same thing" means, so those are MUST: a client that moves era and
// loses a tool breaks. Descriptions and titles are not compared (they are words, not contract).
import { BOUNDS, cut, excerpt } from '../bounds';
import type { ProbeOptions } from '../context';
import { detect } from '../detect';
import { handshake } from '../handshake';
import type { Outcome } from '../outcomes';
import { CURRENT_REVISION, type Era, eraOf, orderRevisions, type Revision, revisionInfo } from '../revisions';
import { canonicalJson, surfaceFromBody } from './canonical';
import { diffSurfaces } from './diff';
import { connectAt, readConnected, type SurfaceRead, surfaceContext } from './read';
import type { CrossEraCheck, CrossEraDifference, CrossEraRun, Surface, SurfaceKind, SurfaceTool } from './surface';

export const CROSS_ERA_CHECK_IDS = [
  'cross_era_connect',
  'tools_match',
  'tool_definitions_match',
  'resources_match',
  'resource_templates_match',
  'prompts_match',
  'capabilities_match',
  'auto_picks_modern',
] as const;
export type CrossEraCheckId = (typeof CROSS_ERA_CHECK_IDS)[number];

export const CROSS_ERA_LEVELS: Record<CrossEraCheckId, 'MUST' | 'SHOULD'> = {
  cross_era_connect: 'MUST',
  tools_match: 'MUST',
  tool_definitions_match: 'MUST',
  resources_match: 'MUST',
  resource_templates_match: 'MUST',
  prompts_match: 'MUST',
  capabilities_match: 'SHOULD',
  auto_picks_modern: 'SHOULD',
};

/** The most differences one check lists (its message counts them all). */
export const CROSS_ERA_MAX_DIFFERENCES = 50;

export interface CrossEraOptions extends ProbeOptions {
  /** The protocols to compare; default every revision detection finds supported. */
  protocols?: Revision[];
}

interface Compared {
  protocol: Revision;
  surface: Surface;
}

const check = (
  id: CrossEraCheckId,
  status: CrossEraCheck['status'],
  message: string,
  differences: CrossEraDifference[] = [],
): CrossEraCheck => ({
  id,
  level: CROSS_ERA_LEVELS[id],
  status,
  message: cut(message, BOUNDS.check),
  differences: differences
    .slice(0, CROSS_ERA_MAX_DIFFERENCES)
    .map((d) => ({ ...d, detail: cut(d.detail, BOUNDS.check) })),
});

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const quote = (name: string) => `\`${name.length > 80 ? `${name.slice(0, 79)}…` : name}\``;

/** Whether `key` sorts beyond the last item a truncated surface kept (so its absence says nothing). */
function beyondCut(surface: Surface, keys: readonly string[], key: string): boolean {
  if (!surface.truncated) return false;
  const last = keys[keys.length - 1];
  return last === undefined || key > last;
}

/** Items every protocol should list: each one missing from a protocol is a difference naming that protocol. */
function sameItems<T>(
  compared: readonly Compared[],
  kind: SurfaceKind,
  list: (s: Surface) => readonly T[],
  key: (t: T) => string,
): CrossEraDifference[] {
  const keysOf = compared.map((c) => list(c.surface).map(key));
  const all = [...new Set(keysOf.flat())].sort();
  const out: CrossEraDifference[] = [];
  for (const name of all) {
    const have = compared.filter((_, i) => keysOf[i]!.includes(name)).map((c) => c.protocol);
    compared.forEach((c, i) => {
      if (keysOf[i]!.includes(name) || beyondCut(c.surface, keysOf[i]!, name)) return;
      out.push({ kind, name, era: c.protocol, detail: `not listed in ${c.protocol} (listed in ${have.join(', ')})` });
    });
  }
  return out;
}

/** What a client relies on in a tool: its name's schemas and annotations, not its words. */
const contractOf = (t: SurfaceTool) =>
  canonicalJson({ i: t.inputSchema, o: t.outputSchema ?? null, a: t.annotations ?? {} });
const WORDS = new Set(['description_changed', 'title_changed']);

/** A one-tool surface, so the surface diff can say how two definitions of one tool differ. */
const alone = (s: Surface, tool: SurfaceTool): Surface => ({
  ...s,
  capabilities: {},
  serverInfo: null,
  tools: [tool],
  resources: [],
  resourceTemplates: [],
  prompts: [],
  truncated: false,
});

function toolDefinitions(compared: readonly Compared[]): CrossEraDifference[] {
  const out: CrossEraDifference[] = [];
  const names = [...new Set(compared.flatMap((c) => c.surface.tools.map((t) => t.name)))].sort();
  for (const name of names) {
    const holders = compared
      .map((c) => ({ protocol: c.protocol, surface: c.surface, tool: c.surface.tools.find((t) => t.name === name) }))
      .filter((h): h is { protocol: Revision; surface: Surface; tool: SurfaceTool } => h.tool !== undefined);
    const ref = holders[0];
    if (!ref) continue;
    for (const h of holders.slice(1)) {
      if (contractOf(h.tool) === contractOf(ref.tool)) continue;
      const how = diffSurfaces(alone(ref.surface, ref.tool), alone(h.surface, h.tool))
        .filter((c) => !WORDS.has(c.change))
        .map((c) => c.message.replace(/^tool `[^`]*`: /, ''));
      out.push({
        kind: 'tool',
        name,
        era: h.protocol,
        detail: `differs in ${h.protocol} from ${ref.protocol}: ${how.length ? how.join('; ') : 'its schemas or annotations differ'}`,
      });
    }
  }
  return out;
}

/** Prompts: the same names, and each one's arguments (names and whether required). */
function promptDifferences(compared: readonly Compared[]): CrossEraDifference[] {
  const out = sameItems(
    compared,
    'prompt',
    (s) => s.prompts,
    (p) => p.name,
  );
  const args = (s: Surface, name: string) => {
    const p = s.prompts.find((x) => x.name === name);
    return p ? canonicalJson((p.arguments ?? []).map((a) => [a.name, a.required === true]).sort()) : undefined;
  };
  const names = [...new Set(compared.flatMap((c) => c.surface.prompts.map((p) => p.name)))].sort();
  for (const name of names) {
    const holders = compared.filter((c) => args(c.surface, name) !== undefined);
    const ref = holders[0];
    if (!ref) continue;
    for (const h of holders.slice(1)) {
      if (args(h.surface, name) !== args(ref.surface, name)) {
        out.push({
          kind: 'prompt',
          name,
          era: h.protocol,
          detail: `arguments differ in ${h.protocol} from ${ref.protocol}`,
        });
      }
    }
  }
  return out;
}

function capabilityDifferences(compared: readonly Compared[]): CrossEraDifference[] {
  const ref = compared[0]!;
  const out: CrossEraDifference[] = [];
  for (const c of compared.slice(1)) {
    const keys = [
      ...new Set([...Object.keys(ref.surface.capabilities), ...Object.keys(c.surface.capabilities)]),
    ].sort();
    for (const key of keys) {
      const a = ref.surface.capabilities[key];
      const b = c.surface.capabilities[key];
      if (a !== undefined && b === undefined) {
        out.push({
          kind: 'capability',
          name: key,
          era: c.protocol,
          detail: `not declared in ${c.protocol} (declared in ${ref.protocol})`,
        });
      } else if (a === undefined && b !== undefined) {
        out.push({
          kind: 'capability',
          name: key,
          era: c.protocol,
          detail: `declared in ${c.protocol}, not in ${ref.protocol}`,
        });
      } else if (canonicalJson(a) !== canonicalJson(b)) {
        out.push({
          kind: 'capability',
          name: key,
          era: c.protocol,
          detail: `${excerpt(canonicalJson(b), [], 100)} in ${c.protocol}, ${excerpt(canonicalJson(a), [], 100)} in ${ref.protocol}`,
        });
      }
    }
  }
  return out;
}

function comparison(
  id: CrossEraCheckId,
  compared: readonly Compared[],
  differences: CrossEraDifference[],
  what: string,
): CrossEraCheck {
  const protocols = compared.map((c) => c.protocol).join(', ');
  if (differences.length === 0) return check(id, 'pass', `${protocols} serve the same ${what}`);
  const first = differences[0]!;
  const more = differences.length > 1 ? ` (and ${plural(differences.length - 1, 'more difference')})` : '';
  return check(id, 'fail', `${first.kind.replace('_', ' ')} ${quote(first.name)}: ${first.detail}${more}`, differences);
}

interface ProtocolRead {
  protocol: Revision;
  read: SurfaceRead;
  outcome: Outcome;
}

async function readProtocol(url: string | URL, protocol: Revision, opts: ProbeOptions): Promise<ProtocolRead> {
  const ctx = surfaceContext(url, opts);
  const connected = await connectAt(ctx, protocol);
  const outcome: Outcome = connected.ok ? 'success' : (connected.opening.failure?.outcome ?? 'protocol_error');
  const read = await readConnected(ctx, revisionInfo(protocol).era, connected);
  // A connection that opened but whose surface could not be read is not a connection that works.
  return {
    protocol,
    read: { ...read, requests: ctx.requests },
    outcome: read.snapshot || !connected.ok ? outcome : 'protocol_error',
  };
}

/** Connect once per protocol, read each surface, and compare them (module comment). Never throws for the server. */
export async function crossEra(url: string | URL, opts: CrossEraOptions = {}): Promise<CrossEraRun> {
  const startedAt = Date.now();
  let requests = 0;
  const probeOpts: ProbeOptions = { ...opts };
  delete (probeOpts as CrossEraOptions).protocols;

  let protocols: Revision[];
  let detectionNote = '';
  let speaksModern: boolean | undefined;
  if (opts.protocols && opts.protocols.length > 0) {
    protocols = orderRevisions(opts.protocols);
  } else {
    const detection = await detect(url, probeOpts);
    requests += detection.requests;
    protocols = detection.revisions.filter((r) => r.supported).map((r) => r.revision);
    speaksModern = protocols.some((p) => revisionInfo(p).era === 'modern');
    if (protocols.length === 0) {
      detectionNote = detection.cause
        ? `detection found no revision (${detection.cause})`
        : 'detection found no revision the server speaks';
    }
  }

  const reads: ProtocolRead[] = [];
  for (const protocol of protocols) {
    const r = await readProtocol(url, protocol, probeOpts);
    requests += r.read.requests;
    reads.push(r);
  }

  const checks: CrossEraCheck[] = [];
  const failed = reads.filter((r) => r.read.snapshot === null);
  if (protocols.length === 0) {
    checks.push(check('cross_era_connect', 'fail', detectionNote));
  } else if (failed.length) {
    checks.push(
      check(
        'cross_era_connect',
        'fail',
        `${failed.map((r) => r.protocol).join(', ')} did not connect: ${failed[0]!.read.message}`,
        failed.map((r) => ({ kind: 'server_info', name: 'connection', era: r.protocol, detail: r.read.message })),
      ),
    );
  } else {
    checks.push(
      check('cross_era_connect', 'pass', `${plural(reads.length, 'protocol')} connected: ${protocols.join(', ')}`),
    );
  }

  const compared: Compared[] = reads
    .filter((r) => r.read.snapshot !== null)
    .map((r) => ({ protocol: r.protocol, surface: surfaceFromBody(r.read.snapshot!.body) }));
  if (compared.length < 2) {
    const why =
      compared.length === 1
        ? `only ${compared[0]!.protocol} connected: nothing to compare`
        : 'no protocol connected: nothing to compare';
    for (const id of CROSS_ERA_CHECK_IDS.slice(1, 7)) checks.push(check(id, 'skip', why));
  } else {
    checks.push(
      comparison(
        'tools_match',
        compared,
        sameItems(
          compared,
          'tool',
          (s) => s.tools,
          (t) => t.name,
        ),
        'tools',
      ),
    );
    checks.push(comparison('tool_definitions_match', compared, toolDefinitions(compared), 'tool definitions'));
    checks.push(
      comparison(
        'resources_match',
        compared,
        sameItems(
          compared,
          'resource',
          (s) => s.resources,
          (r) => r.uri,
        ),
        'resources',
      ),
    );
    checks.push(
      comparison(
        'resource_templates_match',
        compared,
        sameItems(
          compared,
          'resource_template',
          (s) => s.resourceTemplates,
          (t) => t.uriTemplate,
        ),
        'resource templates',
      ),
    );
    checks.push(comparison('prompts_match', compared, promptDifferences(compared), 'prompts'));
    checks.push(comparison('capabilities_match', compared, capabilityDifferences(compared), 'capabilities'));
  }

  // auto: when the server speaks 2026-07-28, a newest-supported handshake must land on it.
  const modern =
    speaksModern ?? reads.some((r) => revisionInfo(r.protocol).era === 'modern' && r.read.snapshot !== null);
  if (!modern) {
    checks.push(
      check(
        'auto_picks_modern',
        'skip',
        `the server does not speak ${CURRENT_REVISION}${opts.protocols ? ' (or it was not compared)' : ''}`,
      ),
    );
  } else {
    const run = await handshake(url, { ...probeOpts, revision: 'newest' });
    requests += run.requests;
    const era: Era | null = run.era ?? eraOf(run.negotiated);
    checks.push(
      run.negotiated === CURRENT_REVISION
        ? check('auto_picks_modern', 'pass', `a newest-supported handshake negotiated ${CURRENT_REVISION}`)
        : check(
            'auto_picks_modern',
            'fail',
            `a newest-supported handshake ${run.negotiated ? `negotiated ${run.negotiated} (${era ?? 'unknown'} era)` : `failed: ${run.message}`}, not ${CURRENT_REVISION}`,
            [
              {
                kind: 'server_info',
                name: 'auto',
                era: run.negotiated ?? 'none',
                detail: excerpt(run.message, [], BOUNDS.check),
              },
            ],
          ),
    );
  }

  return {
    pass: !checks.some((c) => c.level === 'MUST' && c.status === 'fail'),
    protocols: reads.map((r) => ({
      protocol: r.protocol,
      negotiated: r.read.revision,
      era: r.read.snapshot ? r.read.era : eraOf(r.read.revision),
      outcome: r.outcome,
      message: r.read.message,
    })),
    checks,
    requests,
    millis: Date.now() - startedAt,
  };
}

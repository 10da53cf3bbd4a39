// `npm run bench:surface`: what surfaces cost. Diff time for a realistic surface (50 tools with
// schemas) and for the worst case a snapshot holds (90 000 characters), with no change and with one
// change; canonical JSON + sha256 (snapshotOf) and reading a body back (surfaceFromBody); each beside
// a baseline measured in the same run (JSON.stringify, and JSON.parse, of the same surface). Then the
// snapshot body of real fleet-sim targets (read in their own process) and what storing one costs a
// server per day at 5-minute runs, with and without changes.
import {
  canonicalJson,
  diffSurfaces,
  fitSurface,
  readSurfaces,
  SURFACE_MAX_CHARS,
  type Surface,
  type SurfaceTool,
  snapshotOf,
  surfaceFromBody,
} from '@mcp-fleet/probe';
import { columns } from '../table';
import { startSimProcess } from './sim-process-client';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 2000);

function tool(i: number, pad = 0): SurfaceTool {
  const properties: Record<string, unknown> = {
    id: { type: 'string', description: 'The id of the record.' },
    currency: { type: 'string', enum: ['EUR', 'USD', 'GBP', 'JPY'] },
    quantity: { type: 'integer', minimum: 1, maximum: 1000 },
    note: { type: ['string', 'null'], maxLength: 500 },
    address: {
      type: 'object',
      properties: {
        street: { type: 'string' },
        city: { type: 'string' },
        zip: { type: 'string', pattern: '^[0-9]{5}$' },
      },
      required: ['city'],
    },
    tags: { type: 'array', items: { type: 'string' } },
  };
  for (let p = 0; p < pad; p++) properties[`extra_${p}`] = { type: 'string', description: `Extra field ${p}.` };
  return {
    name: `tool_${String(i).padStart(3, '0')}`,
    description: `Tool ${i}: does one useful thing with a record and says what it did.`,
    inputSchema: { type: 'object', properties, required: ['id'] },
    outputSchema: { type: 'object', properties: { ok: { type: 'boolean' }, id: { type: 'string' } }, required: ['ok'] },
    annotations: { readOnlyHint: i % 2 === 0, idempotentHint: true },
  };
}

function surfaceOf(tools: number, pad = 0): Surface {
  return {
    era: 'modern',
    revision: '2026-07-28',
    serverInfo: { name: 'bench', version: '1.0.0' },
    capabilities: { tools: { listChanged: true }, resources: {}, prompts: {} },
    tools: Array.from({ length: tools }, (_, i) => tool(i, pad)),
    resources: Array.from({ length: 5 }, (_, i) => ({
      uri: `file:///r${i}.txt`,
      name: `r${i}`,
      mimeType: 'text/plain',
    })),
    resourceTemplates: [{ uriTemplate: 'records://{id}', name: 'record' }],
    prompts: [{ name: 'summarize', arguments: [{ name: 'id', required: true }] }],
    truncated: false,
  };
}

/** One change: the last tool's `currency` becomes required (breaking). */
function withOneChange(s: Surface): Surface {
  const after = structuredClone(s);
  const schema = after.tools.at(-1)!.inputSchema as { required: string[] };
  schema.required = [...schema.required, 'currency'];
  return after;
}

/** Median microseconds per call of `fn`, over ITERATIONS calls after a warm-up. */
function micros(fn: () => unknown, iterations = ITERATIONS): number {
  for (let i = 0; i < Math.min(200, iterations); i++) fn();
  const samples: number[] = [];
  const batch = 10;
  for (let i = 0; i < iterations / batch; i++) {
    const t0 = process.hrtime.bigint();
    for (let j = 0; j < batch; j++) fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1000 / batch);
  }
  samples.sort((a, b) => a - b);
  return Math.round(samples[Math.floor(samples.length / 2)]! * 10) / 10;
}

const ratio = (a: number, b: number) => `${Math.round((a / Math.max(0.01, b)) * 10) / 10}×`;

/** Bytes a server's surface costs per day at one run every 5 minutes (288 runs). */
function perDay(bodyBytes: number): { unchanged: number; changedEveryRun: number } {
  // Each run keeps a reference (hash + era + revision as JSON in the run, ~110 bytes); a new body is
  // stored once per distinct hash.
  const reference = JSON.stringify({ era: 'modern', revision: '2026-07-28', hash: 'f'.repeat(64) }).length;
  return { unchanged: bodyBytes + 288 * reference, changedEveryRun: 288 * (bodyBytes + reference) };
}

async function main(): Promise<void> {
  const realistic = surfaceOf(50);
  // The largest surface of such tools a snapshot holds whole: the worst case a diff meets.
  let n = 50;
  while (canonicalJson(surfaceOf(n + 1)).length <= SURFACE_MAX_CHARS) n += 1;
  const worst = surfaceOf(n);
  // And one the reader had to cut (schemas marked, items dropped): what fitting costs.
  const fitMicros = micros(() => fitSurface(surfaceOf(400, 6)), 20);
  const rows: string[][] = [
    [
      'Case',
      'body chars',
      'diff same µs',
      'diff 1 change µs',
      'snapshotOf µs',
      'fromBody µs',
      'stringify µs',
      'diff/stringify',
      'hash/stringify',
      'fromBody/parse',
    ],
  ];
  const json: Record<string, unknown>[] = [];
  for (const [name, s] of [
    ['50 tools', realistic],
    [`${n} tools (90k worst case)`, worst],
  ] as const) {
    const body = snapshotOf(s).body;
    const changed = withOneChange(s);
    const changes = diffSurfaces(s, changed);
    if (changes.length !== 1 || changes[0]!.severity !== 'breaking')
      throw new Error(`expected one breaking change, got ${changes.length}`);
    const iterations = body.length > 50_000 ? ITERATIONS / 4 : ITERATIONS;
    const same = micros(() => diffSurfaces(s, s), iterations);
    const one = micros(() => diffSurfaces(s, changed), iterations);
    const snap = micros(() => snapshotOf(s), iterations);
    const back = micros(() => surfaceFromBody(body), iterations);
    const stringify = micros(() => JSON.stringify(s), iterations);
    const parse = micros(() => JSON.parse(body), iterations);
    json.push({
      name,
      bodyChars: body.length,
      tools: s.tools.length,
      diffSameMicros: same,
      diffOneChangeMicros: one,
      snapshotMicros: snap,
      fromBodyMicros: back,
      stringifyMicros: stringify,
      parseMicros: parse,
    });
    rows.push([
      name,
      String(body.length),
      String(same),
      String(one),
      String(snap),
      String(back),
      String(stringify),
      ratio(one, stringify),
      ratio(snap, stringify),
      ratio(back, parse),
    ]);
    process.stderr.write(`${name}: ${body.length} chars, ${s.tools.length} tools\n`);
  }

  const sim = await startSimProcess();
  const sizes = [
    ['Target', 'era', 'revision', 'body bytes', 'tools', 'bytes/day unchanged', 'bytes/day changed every run'],
  ];
  try {
    for (const target of ['catalogue', 'modern', 'dual-era-diff']) {
      for (const read of await readSurfaces(sim.urls.get(target)!)) {
        if (!read.snapshot) continue;
        const bytes = Buffer.byteLength(read.snapshot.body);
        const day = perDay(bytes);
        json.push({ target, era: read.era, revision: read.revision, bodyBytes: bytes, ...day });
        sizes.push([
          target,
          read.era,
          String(read.revision),
          String(bytes),
          String(surfaceFromBody(read.snapshot.body).tools.length),
          String(day.unchanged),
          String(day.changedEveryRun),
        ]);
      }
    }
  } finally {
    sim.stop();
  }
  const worstDay = perDay(SURFACE_MAX_CHARS);
  sizes.push([
    '(bound)',
    '-',
    '-',
    String(SURFACE_MAX_CHARS),
    '-',
    String(worstDay.unchanged),
    String(worstDay.changedEveryRun),
  ]);

  if (process.argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
    return;
  }
  process.stdout.write(
    `\nSurface diff and snapshot cost, median of ${ITERATIONS} calls (baseline: JSON.stringify / JSON.parse of the same surface)\n\n${columns(rows)}\n\nFitting a 400-tool surface (≈ 500k characters) into one snapshot: ${fitMicros} µs\n\nSnapshot bodies of fleet-sim targets, and storage per server per day at 5-minute runs (288 runs; unchanged: one body + a reference per run)\n\n${columns(sizes)}\n`,
  );
}

await main();

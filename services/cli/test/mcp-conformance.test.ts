// The monitor's own MCP endpoint (control's /mcp) holds to what the monitor checks in others:
// `mcp-fleet check <control>/mcp --json` as a user runs it, in the modern era, the legacy one and
// auto, with a token as a remote agent sends it. Every check passes or skips: no MUST failure, and
// no SHOULD failure (a warning) either. And both eras serve one surface (--cross-era).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMemoryBus } from '@mcp-fleet/bus';
import { ApiAuth, type Control, parseFleet, startControl } from '@mcp-fleet/control';
import { type Sim, startSim } from '@mcp-fleet/fleet-sim';
import { createLogger } from '@mcp-fleet/log';
import { checksFor } from '@mcp-fleet/probe';
import { openStore, type Store } from '@mcp-fleet/store';
import { LOOPBACK_FLOOR } from '@mcp-fleet/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/mcp-fleet.js', import.meta.url));
const ADMIN = 'admin-token-for-the-mcp-conformance-test-0123';
const READ = 'read-token-for-the-mcp-conformance-test-01234';

function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

let dir: string;
let store: Store;
let bus: ReturnType<typeof createMemoryBus>;
let control: Control;
let sim: Sim;
const log = createLogger('test', 'silent');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcpfleet-mcp-conformance-'));
  store = await openStore({ dataDir: join(dir, 'pgdata') });
  await store.migrate();
  bus = createMemoryBus({ log });
  // A server in the fleet, so that the resources and tools have something to list.
  sim = await startSim({ only: ['modern'] });
  const fleet = parseFleet(
    `regions: [eu-west]\nservers:\n  - { name: modern, url: "${sim.target('modern').url}", tests: [{ revision: newest }] }\npolicy: { allow: ["127.0.0.0/8"] }\n`,
    'mcp conformance test',
  );
  const auth = new ApiAuth({
    tokens: [
      { scope: 'admin', token: ADMIN },
      { scope: 'read', token: READ },
    ],
  });
  control = await startControl({ store, bus, log, fleet, port: 0, auth, probeFloor: LOOPBACK_FLOOR });
});

afterAll(async () => {
  await control?.stop();
  await bus?.close();
  await store?.close();
  await sim?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Check {
  id: string;
  level: 'MUST' | 'SHOULD';
  status: 'pass' | 'fail' | 'skip';
  message: string;
}

describe.each([
  ['2026-07-28', 'modern', '2026-07-28'],
  ['legacy', 'legacy', '2025-11-25'],
  ['auto', 'modern', '2026-07-28'],
] as const)('mcp-fleet check <control>/mcp --protocol %s', (protocol, era, negotiated) => {
  it.each([
    ['admin', ADMIN],
    ['read', READ],
  ])('with a %s token: every check passes or skips, none fails (MUST or SHOULD)', async (_scope, token) => {
    const target = `${control.url}/mcp`;
    const r = await run(
      'check',
      target,
      '--protocol',
      protocol,
      '--header',
      `Authorization: Bearer ${token}`,
      '--json',
    );
    const json = JSON.parse(r.stdout) as {
      protocol: { requested: string; negotiated: string | null; era: string | null };
      pass: boolean;
      message: string;
      checks: Check[];
    };
    expect(json.protocol, json.message).toEqual({ requested: protocol, negotiated, era });
    const failed = json.checks.filter((c) => c.status === 'fail').map((c) => `${c.level} ${c.id}: ${c.message}`);
    expect(failed).toEqual([]);
    expect(json.pass).toBe(true);
    expect(r.code).toBe(0);
    // Every check of the era ran (or said why it skipped).
    expect(json.checks.map((c) => c.id).sort()).toEqual(
      checksFor(era)
        .map((c) => c.id)
        .sort(),
    );
  });
});

describe('mcp-fleet check <control>/mcp --cross-era', () => {
  it('serves one surface in both eras: every cross-era check passes', async () => {
    const r = await run(
      'check',
      `${control.url}/mcp`,
      '--cross-era',
      '--protocols',
      '2025-11-25,2026-07-28',
      '--header',
      `Authorization: Bearer ${ADMIN}`,
      '--json',
    );
    const json = JSON.parse(r.stdout) as { crossEra: { pass: boolean; checks: Check[] } };
    const failed = json.crossEra.checks
      .filter((c) => c.status === 'fail')
      .map((c) => `${c.level} ${c.id}: ${c.message}`);
    expect(failed).toEqual([]);
    expect(json.crossEra.pass).toBe(true);
  });

  it('without a token: refused (401), as the API is', async () => {
    const r = await run('check', `${control.url}/mcp`, '--protocol', '2026-07-28', '--json');
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout) as { pass: boolean; outcome: string; checks: Check[] };
    expect(json.pass).toBe(false);
    expect(json.outcome).toBe('auth_required');
  });
});

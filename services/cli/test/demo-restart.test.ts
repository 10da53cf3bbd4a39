// Restarting the demo on the same data directory invents no incident: the simulated fleet resumes
// its script where the demo's clock (kept by the database) says it is, instead of going back to
// its starting state, which a monitor that watched it move would record as a downgrade. The
// script is played fast here (a 150 s cycle: era moves at 15 s and 30 s, everything back at 105 s).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePortRun, waitFor } from '@mcp-fleet/testkit';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/mcp-fleet.js', import.meta.url));
const CYCLE_S = 150;
/** The first scripted move after the two the first run watches: drifters back at 7/10 of a cycle. */
const NEXT_SCRIPTED_MOVE_MS = CYCLE_S * 700;

interface Move {
  serverName: string;
  region: string;
  fromRevision: string;
  toRevision: string;
  downgrade: boolean;
  at: string;
}
interface ServerRow {
  name: string;
  byRegion: { region: string; lastRunAt: string | null }[];
}

describe('mcp-fleet up: the demo restarted on the same data directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-demo-restart-'));
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (apiPort: number) => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      MCP_FLEET_API_PORT: String(apiPort),
      MCP_FLEET_AGENT_PORT: String(apiPort + 1),
      LOG_LEVEL: 'warn',
    };
    // Embedded PGlite under the data directory, as `npm start` runs it.
    delete env.DATABASE_URL;
    delete env.NATS_URL;
    const args = [BIN, 'up', '--no-dashboard', '--demo-interval', '2', '--demo-cycle', String(CYCLE_S)];
    const proc = spawn(process.execPath, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    let output = '';
    proc.stdout!.on('data', (d) => (output += d));
    proc.stderr!.on('data', (d) => (output += d));
    await waitFor('mcp-fleet to be up', () => output.includes('mcp-fleet is up.'), 60_000).catch((err) => {
      throw new Error(`${err.message}\n${output.slice(-3000)}`);
    });
    return {
      stop: async () => {
        const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
        proc.kill('SIGINT');
        expect(await exited).toBe(0);
      },
    };
  };

  it('records no era move or downgrade the script did not make', async () => {
    const apiPort = await freePortRun();
    const api = `http://127.0.0.1:${apiPort}`;
    const get = async <T>(path: string) => (await (await fetch(`${api}${path}`)).json()) as T;
    const moves = async () => (await get<{ moves: Move[] }>('/api/era-moves?range=1h&limit=500')).moves;
    // The demo's clock starts no earlier than this: a move before epoch + NEXT_SCRIPTED_MOVE_MS is
    // surely not the script's, however slowly the first start went.
    const notBefore = Date.now();

    const first = await start(apiPort);
    // The first run watches the script move two drifters: an era move and a downgrade, each region.
    await waitFor(
      'drifter-modern to move to 2026-07-28 and drifter down to 2025-06-18, in both regions',
      async () => {
        const list = await moves();
        const seen = (server: string, to: string) =>
          list.filter((m) => m.serverName === server && m.toRevision === to).length === 2;
        return seen('drifter-modern', '2026-07-28') && seen('drifter', '2025-06-18');
      },
      60_000,
    );
    const before = await moves();
    await first.stop();

    const restartedAt = Date.now();
    const second = await start(apiPort);
    // Every drifter runs again in both regions after the restart, a few times over (every 2 s).
    const ranAfter = async (since: number) => {
      const { servers } = await get<{ servers: ServerRow[] }>('/api/servers');
      return servers
        .filter((s) => s.name.startsWith('drifter'))
        .every(
          (s) =>
            s.byRegion.length === 2 && s.byRegion.every((r) => r.lastRunAt && new Date(r.lastRunAt).getTime() > since),
        );
    };
    await waitFor('every drifter to run after the restart', () => ranAfter(restartedAt), 30_000);
    for (const time of ['again', 'a third time']) {
      const since = Date.now();
      await waitFor(`every drifter to run ${time}`, () => ranAfter(since), 15_000);
    }
    const checkedUntil = Date.now();
    // Inconclusive past the next scripted move (a very slow machine): say so rather than pass.
    expect(checkedUntil - notBefore, 'the checks ran before the next scripted move').toBeLessThan(
      NEXT_SCRIPTED_MOVE_MS,
    );

    const after = await moves();
    const invented = after.filter((m) => new Date(m.at).getTime() > restartedAt);
    expect(invented, 'moves recorded after the restart').toEqual([]);
    expect(after).toHaveLength(before.length);
    // What the first run recorded is kept as it was.
    expect(after).toEqual(before);
    await second.stop();
  }, 240_000);
});

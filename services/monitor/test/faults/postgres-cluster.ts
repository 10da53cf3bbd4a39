// A private PostgreSQL cluster (initdb in a temporary directory, its own port and socket
// directory) that a test may stop and start again; the shared Postgres on 5432 is never touched.
// initdb and postgres refuse to run as root: as root, they run as the `postgres` user.
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@mcp-fleet/testkit';

const run = promisify(execFile);

function binDir(): string {
  if (process.env.MCP_FLEET_PG_BIN) return process.env.MCP_FLEET_PG_BIN;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions[0]) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql/*/bin (set MCP_FLEET_PG_BIN)');
  return join(root, versions[0], 'bin');
}

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust auth, loopback only). */
  readonly url: string;
  readonly port: number;
  start(): Promise<void>;
  /** `pg_ctl stop -m fast`: connections are cut, the server is down until start(). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-faults-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const id = async (flag: string) => Number((await run('id', [flag, 'postgres'])).stdout.trim());
    chownSync(dir, await id('-u'), await id('-g'));
  }
  const pg = (tool: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]) : run(join(bin, tool), args);
  await pg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync']);
  let up = false;
  const cluster: PrivatePostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
      await pg('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']);
      up = true;
    },
    async stop() {
      await pg('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      up = false;
    },
    async close() {
      if (up) await pg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  // A test that dies midway still leaves no postmaster behind (ours, by its data directory).
  process.once('exit', () => {
    if (!up) return;
    const args = ['-D', data, '-m', 'immediate', '-w', 'stop'];
    try {
      if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', join(bin, 'pg_ctl'), ...args], { stdio: 'ignore' });
      else execFileSync(join(bin, 'pg_ctl'), args, { stdio: 'ignore' });
    } catch {}
  });
  await cluster.start();
  return cluster;
}

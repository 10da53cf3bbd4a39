// `mcp-fleet secrets init` run as the compose stack runs it: the real CLI, as a process, with an
// environment of our choosing (the .env values it is given, nothing of the test runner's).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO } from './source-env';

const run = promisify(execFile);

/** The NATS users deploy/nats defines: control's, and one per region for its agents. */
export const NATS_USERS = {
  control: 'mcp-fleet-control',
  agent: (region: string) => `mcp-fleet-agent-${region}`,
};

export interface InitRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `mcp-fleet <args>` with only PATH, HOME and `env` in its environment. */
export async function runCli(args: string[], env: Record<string, string> = {}): Promise<InitRun> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(REPO, 'services/cli/bin/mcp-fleet.js'), ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env } as unknown as NodeJS.ProcessEnv,
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

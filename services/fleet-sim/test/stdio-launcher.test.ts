// The demo's stdio launcher (stdio-launcher.ts) is what an agent allowlists instead of `node`: the
// attack is a fleet entry that names it with arguments and an environment of its own, hoping to
// run other code through node (`-e`, NODE_OPTIONS=--require). Neither reaches node; the launcher
// still starts the SDK server it was written for.
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { handshake } from '@mcp-fleet/probe';
import { afterAll, describe, expect, it } from 'vitest';
import { writeStdioLauncher } from '../src';

describe('writeStdioLauncher', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpfleet-launcher-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('starts its server only: a job’s arguments and NODE_OPTIONS run nothing', async () => {
    const launcher = writeStdioLauncher(dir, 'v2');
    expect(statSync(launcher).mode & 0o777).toBe(0o755);
    const marker = join(dir, 'ran');
    const evil = join(dir, 'evil.cjs');
    writeFileSync(evil, `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'required');\n`);
    const run = await handshake(
      {
        command: launcher,
        args: ['-e', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'evaluated')`],
        env: { NODE_OPTIONS: `--require ${evil}` },
      },
      { revision: 'newest', timeoutMs: 15_000 },
    );
    expect(run.outcome).toBe('success');
    expect(run.negotiated).toBe('2026-07-28');
    expect(existsSync(marker)).toBe(false);
    // The same file is code when node does get the variable: the test above could have failed.
    const unguarded = await handshake(
      { command: process.execPath, args: ['-e', ''], env: { NODE_OPTIONS: `--require ${evil}` } },
      { revision: 'newest', timeoutMs: 15_000 },
    );
    expect(unguarded.outcome).not.toBe('success');
    expect(existsSync(marker)).toBe(true);
  });

  it('quotes a directory with a quote in its name', async () => {
    const odd = mkdtempSync(join(dir, "it's "));
    const run = await handshake({ command: writeStdioLauncher(odd, 'v1'), args: [], env: {} }, { revision: 'newest' });
    expect(run.outcome).toBe('success');
    expect(run.negotiated).toBe('2025-11-25');
  });
});

// The house logger as an operator meets it: JSON lines when piped or LOG_FORMAT=json, pino-pretty
// lines on a terminal (a real pseudo-terminal, from util-linux's `script`), colours only there and
// never under NO_COLOR, and a server's escape sequences shown, never played.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('./log-lines.script.ts', import.meta.url));
const COMMAND = `${process.execPath} --import tsx ${SCRIPT}`;
const HAVE_SCRIPT = existsSync('/usr/bin/script');
const ESC = '\u001b';

/** The lines the logger writes, with stdout a pipe or (`tty`) a pseudo-terminal. */
async function lines(env: Record<string, string | undefined>, tty: boolean): Promise<string[]> {
  const clean = { ...process.env, LOG_FORMAT: undefined, NO_COLOR: undefined, LOG_LEVEL: undefined, ...env };
  const { stdout } = tty
    ? await run('script', ['-qfec', COMMAND, '/dev/null'], { env: clean as NodeJS.ProcessEnv, timeout: 30_000 })
    : await run(process.execPath, ['--import', 'tsx', SCRIPT], { env: clean as NodeJS.ProcessEnv, timeout: 30_000 });
  return stdout.split(/\r?\n/).filter(Boolean);
}

describe('log lines', () => {
  it('are JSON when piped, with the event field', async () => {
    const out = await lines({}, false);
    const first = JSON.parse(out[0]!);
    expect(first).toMatchObject({ level: 30, event: 'era_move', server: 'drifter-modern', region: 'eu-west' });
    expect(out.map((l) => JSON.parse(l).msg)).toHaveLength(3);
  });

  it.skipIf(!HAVE_SCRIPT)('are JSON on a terminal with LOG_FORMAT=json', async () => {
    const out = await lines({ LOG_FORMAT: 'json' }, true);
    expect(out).toHaveLength(3);
    for (const l of out) expect(() => JSON.parse(l)).not.toThrow();
  });

  it.skipIf(!HAVE_SCRIPT)('are pretty and coloured on a terminal; NO_COLOR takes the colours away', async () => {
    const coloured = await lines({}, true);
    expect(coloured[0]).toContain(ESC);
    expect(coloured[0]).toContain('era move: drifter-modern in eu-west now 2026-07-28, was 2025-11-25');
    expect(() => JSON.parse(coloured[0]!)).toThrow();

    const plain = await lines({ NO_COLOR: '1' }, true);
    expect(plain).toEqual([
      expect.stringMatching(
        /^\[\d\d:\d\d:\d\d\] INFO: era move: drifter-modern in eu-west now 2026-07-28, was 2025-11-25$/,
      ),
      expect.stringMatching(/^\[\d\d:\d\d:\d\d\] WARN: could not ack the job err=connection refused jobId=hs\.1$/),
      expect.stringMatching(/INFO: a server said \\x1b\]0;owned\\x07 reason=said \\x1b\[31mred\\x1b\[0m$/),
    ]);
    for (const l of plain) expect(l).not.toContain(ESC);
  });

  it('are pretty without colours when piped with LOG_FORMAT=pretty', async () => {
    const out = await lines({ LOG_FORMAT: 'pretty' }, false);
    expect(out[0]).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: era move: drifter-modern/);
    for (const l of out) expect(l).not.toContain(ESC);
  });
});

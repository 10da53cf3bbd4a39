// A stdio server's fields in a fleet entry (issue 20): `command`, `args`, `env`, `cwd`, given
// instead of `url`. Trust boundary: the fleet file (fleet-file.ts) and control's API body
// (control's server-body.ts) both read them with these schemas, so a hostile entry is refused the
// same way whichever door it came in by. What is checked here is the entry's shape; whether a
// command may run at all is each agent's own allowlist's to say (agent's stdio-gate.ts), never the
// fleet's.
import { z } from 'zod';

/** Bounds a command line must keep (they travel in every job, and show on every page as its target). */
export const STDIO_BOUNDS = {
  commandChars: 1_024,
  args: 64,
  argChars: 4_096,
  argsChars: 16_384,
  env: 64,
  envNameChars: 128,
  envValueChars: 8_192,
  cwdChars: 1_024,
} as const;

// NUL ends a C string (spawn would refuse or cut it); other controls hide what runs from whoever reads the plan.
const noControls = (s: string) => ![...s].some((c) => c < ' ' || c === '\u007f');

/**
 * The program: a bare name (the agent finds it on its own PATH, never the entry's) or an absolute
 * path without `..`. A relative path would mean whatever the working directory makes of it.
 */
export const stdioCommand = z
  .string({ error: 'a program name or an absolute path' })
  .min(1, 'a program name or an absolute path')
  .max(STDIO_BOUNDS.commandChars, `at most ${STDIO_BOUNDS.commandChars} characters`)
  .refine(noControls, 'a command without control characters')
  .refine(
    (c) => /^[A-Za-z0-9_.+@-]+$/.test(c) || (c.startsWith('/') && !c.split('/').includes('..')),
    'a bare program name (found on the agent’s PATH) or an absolute path without `..`',
  );

/** Arguments, as given (no shell): bounded in count and size, since each job carries them. */
export const stdioArgs = z
  .array(
    z
      .string({ error: 'each argument is a string: quote numbers and booleans' })
      .max(STDIO_BOUNDS.argChars, `at most ${STDIO_BOUNDS.argChars} characters`)
      .refine((a) => !a.includes('\0'), 'an argument without NUL'),
  )
  .max(STDIO_BOUNDS.args, `at most ${STDIO_BOUNDS.args} arguments`)
  .refine(
    (args) => args.reduce((n, a) => n + a.length, 0) <= STDIO_BOUNDS.argsChars,
    `at most ${STDIO_BOUNDS.argsChars} characters of arguments in all`,
  );

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The process's whole environment (nothing of the agent's is inherited). Values may be secrets:
 * they are sealed at rest like header values and never shown; errors name the variable, never
 * its value. A YAML number or boolean is refused, not turned into text behind the writer's back.
 */
export const stdioEnv = z
  .record(
    z.string(),
    z
      .string({ error: 'an environment value is a string: quote numbers and booleans' })
      .max(STDIO_BOUNDS.envValueChars, `at most ${STDIO_BOUNDS.envValueChars} characters`)
      .refine((v) => !v.includes('\0'), 'a value without NUL'),
  )
  .superRefine((env, ctx) => {
    const names = Object.keys(env);
    if (names.length > STDIO_BOUNDS.env)
      ctx.addIssue({ code: 'custom', message: `at most ${STDIO_BOUNDS.env} variables` });
    for (const name of names)
      if (!ENV_NAME.test(name) || name.length > STDIO_BOUNDS.envNameChars)
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `a variable name: letters, digits and _, not starting with a digit (≤ ${STDIO_BOUNDS.envNameChars})`,
        });
  });

/**
 * A working directory relative to the agent's own stdio root (`--stdio-root`): never absolute,
 * never `..`, so an entry cannot point a process at a directory of the agent's host it chose.
 */
export const stdioCwd = z
  .string({ error: 'a relative directory' })
  .min(1, 'a relative directory')
  .max(STDIO_BOUNDS.cwdChars, `at most ${STDIO_BOUNDS.cwdChars} characters`)
  .refine(noControls, 'a directory without control characters')
  .refine(
    (d) => !d.startsWith('/') && !d.startsWith('~') && !d.split(/[/\\]/).includes('..'),
    "a directory relative to the agent's --stdio-root, without `..` (a process never runs where an entry points it)",
  );

/** The four keys, for an entry's schema to spread. */
export const stdioFields = {
  command: stdioCommand.optional(),
  args: stdioArgs.optional(),
  env: stdioEnv.optional(),
  cwd: stdioCwd.optional(),
};

/** A stdio server's command as stored and scheduled: the entry's four keys, args and env filled. */
export interface StdioCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string | undefined;
}

/**
 * Which target an entry gives: exactly one of `url` and `command`; `args`, `env` and `cwd` only
 * with a command, `headers` only with a URL. A problem per key, in words; none when it is right.
 */
export function targetProblems(e: {
  url?: unknown;
  command?: unknown;
  args?: unknown;
  env?: unknown;
  cwd?: unknown;
  headers?: unknown;
}): { key: string; message: string }[] {
  const out: { key: string; message: string }[] = [];
  if (e.url !== undefined && e.command !== undefined)
    out.push({ key: 'command', message: 'give `url` or `command` (a stdio server), not both' });
  else if (e.url === undefined && e.command === undefined)
    out.push({ key: 'url', message: 'give `url` (an HTTP server) or `command` (a stdio server)' });
  if (e.command === undefined)
    for (const k of ['args', 'env', 'cwd'] as const)
      if (e[k] !== undefined) out.push({ key: k, message: `\`${k}\` goes with \`command\` (a stdio server)` });
  if (e.command !== undefined && e.headers !== undefined && Object.keys(e.headers as object).length > 0)
    out.push({ key: 'headers', message: 'a stdio server takes `env`, not `headers`' });
  return out;
}

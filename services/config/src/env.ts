// A role's environment as one zod schema: each variable with what it selects and its default (the
// README's table and the deploy checks read them from here), parsed once at the edge into a typed
// object. A secret may come from a file instead (`<VAR>_FILE`: a mounted secret), read before the
// schema sees the environment. Errors are one sentence naming the variable, never its value.
import { closeSync, openSync, readSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';

export type Env = Readonly<Record<string, string | undefined>>;

/** A setting is wrong: one sentence for the operator, naming the variable (the CLI exits with code 2). */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** What the README's table says of a variable. */
export interface VariableMeta {
  description: string;
  /** The value used when it is unset, as an operator would write it. */
  default?: string | undefined;
  /** A credential: may come from `<VAR>_FILE`, and is never printed. */
  secret?: boolean | undefined;
  /** `<VAR>_FILE`: the variable whose file this is. */
  fileOf?: string | undefined;
}

/** One variable: `schema` takes the raw string (undefined when unset) and gives its typed value. */
export function variable<T extends z.ZodType>(schema: T, meta: VariableMeta): T {
  return schema.meta({ ...meta }) as T;
}

/** A secret and its `<VAR>_FILE`, for a role's shape. */
export function secret<N extends string, T extends z.ZodType>(
  name: N,
  schema: T,
  meta: Omit<VariableMeta, 'secret'>,
): Record<N, T> & Record<`${N}_FILE`, z.ZodOptional<z.ZodString>> {
  return {
    [name]: variable(schema, { ...meta, secret: true }),
    [`${name}_FILE`]: variable(z.string().optional(), {
      description: `a file holding ${name} if it is unset`,
      fileOf: name,
    }),
  } as Record<N, T> & Record<`${N}_FILE`, z.ZodOptional<z.ZodString>>;
}

/** A role's environment: its variables (the shape) and the schema that makes its settings. */
export interface RoleEnv<S extends z.ZodRawShape = z.ZodRawShape, T = unknown> {
  role: string;
  variables: S;
  schema: z.ZodType<T>;
}

/** Raw strings as the process has them; the rest of a role's settings are built from the parsed shape. */
export function roleEnv<S extends z.ZodRawShape, T>(
  role: string,
  variables: S,
  build: (v: z.output<z.ZodObject<S>>, ctx: z.RefinementCtx) => T,
): RoleEnv<S, T> {
  const files = Object.values(variables).flatMap((s) => {
    const of = metaOf(s)?.fileOf;
    return of ? [of] : [];
  });
  const schema = z.preprocess(
    (env) => withSecretFiles(env as Env, files),
    z.object(variables).transform((v, ctx) => build(v, ctx)),
  ) as unknown as z.ZodType<T>;
  return { role, variables, schema };
}

/** The role's settings from `env` (the process's, at the edge); ConfigError names the first wrong variable. */
export function parseEnv<T>(role: RoleEnv<z.ZodRawShape, T>, env: Env): T {
  const parsed = role.schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  // A field's own messages name it; zod's generic ones (a wrong type) get the name in front.
  const name = typeof issue.path[0] === 'string' ? issue.path[0] : undefined;
  throw new ConfigError(name && !issue.message.includes(name) ? `${name}: ${issue.message}` : issue.message);
}

/** Each variable a role reads, with its documentation, in the schema's order. */
export function variablesOf(role: RoleEnv): { name: string; meta: VariableMeta }[] {
  return Object.entries(role.variables).map(([name, s]) => ({ name, meta: metaOf(s) ?? { description: '' } }));
}

function metaOf(schema: unknown): VariableMeta | undefined {
  return (schema as z.ZodType).meta() as VariableMeta | undefined;
}

/** A secret file is a line or two; anything bigger (a device, the wrong path) is refused unread. */
const MAX_SECRET_FILE_BYTES = 64 * 1024;

/**
 * One secret: the variable's own value when set (non-empty), else the contents of the file its
 * `_FILE` variable names (one trailing newline dropped), else undefined. The file's contents are
 * never in an error: only the variable and the path are.
 */
export function secretFromEnv(name: string, env: Env): string | undefined {
  const inline = env[name];
  if (inline !== undefined && inline !== '') return inline;
  const path = env[`${name}_FILE`]?.trim();
  if (!path) return inline;
  // The path crosses a trust boundary only as configuration; the contents are a secret: read at
  // most MAX_SECRET_FILE_BYTES (a device like /dev/zero never ends) and never echo them.
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new ConfigError(`cannot read ${name}_FILE ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    const buf = Buffer.alloc(MAX_SECRET_FILE_BYTES + 1);
    let size = 0;
    for (let n = -1; n !== 0 && size < buf.length; size += n) n = readSync(fd, buf, size, buf.length - size, null);
    if (size > MAX_SECRET_FILE_BYTES)
      throw new ConfigError(`${name}_FILE ${path} is larger than ${MAX_SECRET_FILE_BYTES} bytes: not a secret file`);
    return buf
      .subarray(0, size)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`cannot read ${name}_FILE ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  } finally {
    closeSync(fd);
  }
}

/**
 * The environment with each of `names`' `<VAR>_FILE` read into `<VAR>` where `<VAR>` itself is
 * unset or empty (the variable wins). A copy: the process's environment is not changed.
 */
export function withSecretFiles(env: Env, names: readonly string[]): Record<string, string | undefined> {
  const out = { ...env };
  for (const name of names) {
    const value = secretFromEnv(name, env);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

// The kinds of value variables hold. Each builder takes the variable's name for its messages.

/** The string as set (empty included), or undefined. */
export const raw = () => z.string().optional();

/** Trimmed; empty counts as unset. */
export const text = () =>
  z
    .string()
    .optional()
    .transform((s) => s?.trim() || undefined);

/** A whole number from 1 to `max`; unset takes `fallback` (the CLI's flags say the same sentence). */
export function wholeNumber(name: string, fallback: number, max: number) {
  return z
    .string()
    .optional()
    .transform((s, ctx) => {
      if (s === undefined) return fallback;
      const n = Number(s);
      if (Number.isInteger(n) && n > 0 && n <= max) return n;
      ctx.addIssue({ code: 'custom', message: `${name} takes a whole number from 1 to ${max}, got ${s}` });
      return z.NEVER;
    });
}

/** An IPv4 or IPv6 address (no host name, CIDR or port), trimmed; empty counts as unset. */
export function ipAddress(name: string) {
  return z
    .string()
    .optional()
    .transform((s, ctx) => {
      const value = s?.trim() || undefined;
      if (value === undefined || isIP(value) !== 0) return value;
      ctx.addIssue({
        code: 'custom',
        message: `${name} takes an IP address of this host, like 192.0.2.10 or 2001:db8::10, got ${JSON.stringify(value)}`,
      });
      return z.NEVER;
    });
}

/** `1` or `true`. */
export const flag = () =>
  z
    .string()
    .optional()
    .transform((s) => s === '1' || s === 'true');

/** Comma-separated, each entry trimmed, empty ones dropped; unset or empty is undefined. */
export const commaList = () =>
  z
    .string()
    .optional()
    .transform((s) => {
      const items = (s ?? '')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
      return s === undefined ? undefined : items;
    });

/** Runs a rule that throws (auth's token and host checks), its message an issue. */
export function attempt<T>(ctx: z.RefinementCtx, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
}

// Errors the store throws on purpose, and the one rule for the ones it passes on: drizzle puts a
// failed query's parameters in its message, and a server's parameters include its credentials.

/** A run or detection names a test or server the database does not know. Retrying cannot help. */
export class UnknownRecordError extends Error {
  /** The SQLSTATE behind it (23503 or 22P02), for callers that sort errors by class. */
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.name = 'UnknownRecordError';
    this.code = code;
  }
}

/** A second active server with the same name. */
export class DuplicateNameError extends Error {
  readonly code = '23505';
  constructor(name: string) {
    super(`a server named ${JSON.stringify(name)} already exists`);
    this.name = 'DuplicateNameError';
  }
}

/** The Postgres error code (SQLSTATE) behind a drizzle or driver error, if any. */
export function pgCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The same failure without the query's parameters (a drizzle message lists them all). */
export function withoutParams(err: unknown): Error {
  if (!(err instanceof Error) || !('params' in err)) return err instanceof Error ? err : new Error(String(err));
  const cause = err.cause instanceof Error ? err.cause : undefined;
  const query = 'query' in err && typeof err.query === 'string' ? err.query.slice(0, 120) : 'a query';
  const clean = new Error(`${cause?.message ?? 'database error'} (in ${query})`);
  const code = pgCode(err);
  if (code) Object.assign(clean, { code });
  return clean;
}

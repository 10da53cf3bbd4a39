// The house logger: pino, JSON lines, with request headers and credentials redacted wherever
// they appear, so a job (which carries its target's headers) can never leak them into a log.
import pino, { type DestinationStream, type Level, type Logger } from 'pino';

export type { Logger } from 'pino';

/** Paths pino replaces with `[redacted]`: headers carry credentials. */
export const REDACTED_PATHS = [
  'headers',
  '*.headers',
  'authorization',
  '*.authorization',
  'Authorization',
  '*.Authorization',
];

/**
 * A logger named after its service or part (`bus`, `agent`, `control`). The level defaults to
 * `LOG_LEVEL`, else `info`; `destination` is for tests that read what was logged.
 */
export function createLogger(name: string, level?: Level | 'silent', destination?: DestinationStream): Logger {
  const options = {
    name,
    level: level ?? (process.env.LOG_LEVEL as Level | undefined) ?? 'info',
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}

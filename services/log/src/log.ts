// The house logger: pino, with request headers and credentials redacted wherever they appear, so
// a job (which carries its target's headers) can never leak them into a log. Two faces, one
// logger: JSON lines for machines (stdout not a terminal, or LOG_FORMAT=json), and pino-pretty's
// lines for the person at a terminal (LOG_FORMAT=pretty forces them), coloured only on a terminal
// and never under NO_COLOR (https://no-color.org). The process's start says which (configureLogs).
import { createRequire } from 'node:module';
import pino, { type DestinationStream, type Level, type Logger } from 'pino';
import type pretty from 'pino-pretty';

// pino-pretty (and its ~60 modules) is loaded only for a person at a terminal: a deployed agent or
// control logs JSON lines and need not hold it (bench:memory). Required, not imported: a logger is
// made synchronously.
const load = createRequire(import.meta.url);
const prettyFactory = (): typeof pretty => load('pino-pretty') as typeof pretty;

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

export type LogFormat = 'json' | 'pretty';

type Terminal = { isTTY?: boolean | undefined };

/** How a process logs: its role's LOG_LEVEL, LOG_FORMAT and NO_COLOR, as config parsed them at the edge. */
export interface LogSettings {
  level: Level | 'silent';
  /** Asked for; unset: pretty on a terminal, JSON when piped. */
  format: LogFormat | undefined;
  /** False under NO_COLOR; colours need a terminal too. */
  colour: boolean;
}

let settings: LogSettings = { level: 'info', format: undefined, colour: true };

/** This process's log settings, set once at its start (the CLI verb, from its role's environment). */
export function configureLogs(given: LogSettings): void {
  settings = given;
}

/** The format asked for, else pretty on a terminal and JSON when piped. */
export function logFormat(given: LogSettings = settings, stdout: Terminal = process.stdout): LogFormat {
  return given.format ?? (stdout.isTTY ? 'pretty' : 'json');
}

/** Colours only on a terminal, and not when NO_COLOR is set to anything. */
export function colourOn(given: LogSettings = settings, stdout: Terminal = process.stdout): boolean {
  return Boolean(stdout.isTTY) && given.colour;
}

/**
 * A logger named after its service or part (`bus`, `agent`, `control`). The level defaults to the
 * process's (configureLogs: LOG_LEVEL), else `info`; `destination` is for tests and tools that read what was logged (JSON).
 */
export function createLogger(name: string, level?: Level | 'silent', destination?: DestinationStream): Logger {
  const options = {
    name,
    level: level ?? settings.level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  if (destination) return pino(options, destination);
  if (logFormat() === 'json') return pino(options);
  return pino(options, prettyStream(colourOn()));
}

/**
 * Control characters shown as `\xNN`: a log line can quote what a probed server sent (a terminal
 * is a trust boundary too), and an escape sequence must not drive the operator's terminal.
 * JSON lines escape them already.
 */
function visible(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** Keys every line has, or that a person at a terminal does not need (pid, host, the logger's name). */
const PLUMBING = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'name', 'event']);

/**
 * pino-pretty on stdout, in this process (sync: lines stay in order with what a command prints).
 * A line is its time, level and message, then what the message does not already say: scalar
 * fields (not flags) whose value is not in the message; on warnings and errors also structured ones (compact
 * JSON; an error by its message). JSON lines keep every field.
 */
export function prettyStream(colorize: boolean, destination: number | NodeJS.WritableStream = 1): DestinationStream {
  return prettyFactory()({
    colorize,
    sync: true,
    destination,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,name',
    hideObject: true,
    messageFormat: (line, messageKey, _level, { colors }) => {
      const msg = String(line[messageKey] ?? '');
      const warning = typeof line.level === 'number' && line.level >= 40;
      const extra: string[] = [];
      for (const [key, value] of Object.entries(line)) {
        if (PLUMBING.has(key) || value === undefined || value === null) continue;
        // A flag's meaning belongs in the sentence; its value alone says nothing to a reader.
        if (typeof value === 'boolean') continue;
        if (typeof value !== 'object') {
          if (!msg.includes(String(value))) extra.push(`${key}=${String(value)}`);
        } else if (warning) {
          const v = value as { message?: unknown };
          extra.push(`${key}=${typeof v.message === 'string' ? v.message : JSON.stringify(value)}`);
        }
      }
      const text = visible(msg);
      return extra.length ? `${text} ${colors.gray(visible(extra.join(' ')))}` : text;
    },
  });
}

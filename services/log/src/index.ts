export { colourOn, createLogger, type LogFormat, type Logger, logFormat, prettyStream, REDACTED_PATHS } from './log';

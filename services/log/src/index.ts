export {
  colourOn,
  configureLogs,
  createLogger,
  type LogFormat,
  type Logger,
  type LogSettings,
  logFormat,
  prettyStream,
  REDACTED_PATHS,
} from './log';

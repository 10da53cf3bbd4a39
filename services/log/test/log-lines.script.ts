// Run by log.test.ts in a child process, on a pseudo-terminal or a pipe: logs what an operator
// would see (a change with its event, a warning with an error, a server's text with an escape).
import { controlEnv, parseEnv } from '@mcp-fleet/config';
import { configureLogs, createLogger } from '../src';

// As a verb starts: its environment's LOG_LEVEL, LOG_FORMAT and NO_COLOR.
configureLogs(parseEnv(controlEnv, process.env).log);
const log = createLogger('mcp-fleet');
log.info(
  { event: 'era_move', server: 'drifter-modern', region: 'eu-west', from: '2025-11-25', to: '2026-07-28' },
  'era move: drifter-modern in eu-west now 2026-07-28, was 2025-11-25',
);
log.warn({ err: new Error('connection refused'), jobId: 'hs.1' }, 'could not ack the job');
log.info({ reason: 'said \u001b[31mred\u001b[0m' }, 'a server said \u001b]0;owned\u0007');

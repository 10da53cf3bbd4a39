// The stdio transport's own checks (seed 002, section 5), judged once the run's processes have
// ended: every line on stdout was a JSON-RPC message, and the connection's process ended when its
// stdin closed (no SIGTERM, no SIGKILL).
import type { Exchange } from '../exchange';
import { notJsonSentence, stdoutNotJson } from '../stdio/report';
import type { CheckContext } from './check-context';
import { PipeConnection } from './pipe-connection';
import { fail, pass, skip, type Verdict } from './verdict';

type Observer = (c: CheckContext, exchanges: readonly Exchange[]) => Verdict;

export const STDIO_CHECKS: Record<string, Observer> = {
  stdout_only_protocol: (c, exchanges) => {
    const processes = c.conn.ctx.processes;
    const notJson = stdoutNotJson(processes);
    if (notJson.count > 0) return fail(notJsonSentence(notJson, c.secrets));
    const answers = exchanges.filter((ex) => ex.response !== undefined).length;
    return pass(`${answers} answers from ${processes.length} processes, every stdout line JSON-RPC`);
  },
  exits_on_stdin_close: (c) => {
    const ending = c.conn instanceof PipeConnection ? c.conn.ending : undefined;
    if (!ending) return skip('the connection was not closed');
    const how = ending.signal ? `signal ${ending.signal}` : `exit code ${ending.code}`;
    switch (ending.by) {
      case 'stdin_close':
        return pass(`the process ended when stdin closed (${how})`);
      case 'itself':
        return skip(`the process had ended before stdin was closed (${how})`);
      default:
        return fail(`the process did not end when stdin closed: it took ${ending.by.toUpperCase()} (${how})`);
    }
  },
};

// What every check gets: the open connection, the secrets to keep out of its words, and the
// shared steps of the negative checks — a valid request after each bad one (its failures make
// `server_alive_after_bad_input`), an unknown method, an expected error code.
import { type Exchange, onPipe } from '../exchange';
import { errorOf, resultOf } from '../jsonrpc';
import type { Connection } from './connection';
import { answered, declares, fail, pass, statusIs, succeeded, type Verdict } from './verdict';

export const NO_SUCH_METHOD = 'mcp_fleet/no_such_method';

export type CheckRunner = (c: CheckContext) => Promise<Verdict>;

export class CheckContext {
  /** Bad inputs sent, and the first valid request after one that did not succeed. */
  readonly badInputs: string[] = [];
  deadAfter: { after: string; ex: Exchange } | undefined;

  constructor(
    readonly conn: Connection,
    readonly secrets: readonly string[],
  ) {}

  /** The request that proves the server still works: tools/list when it has tools, else what every server answers. */
  async aliveRequest(): Promise<Exchange> {
    if (declares(this.conn.capabilities, 'tools')) return this.conn.call('tools/list');
    return this.conn.call(this.conn.era === 'modern' ? 'server/discover' : 'ping');
  }

  /** After a bad request: a valid one must still succeed (its first failure is kept). */
  async stillAlive(after: string): Promise<void> {
    this.badInputs.push(after);
    const ex = await this.aliveRequest();
    if (!succeeded(ex) && !this.deadAfter) this.deadAfter = { after, ex };
  }

  unknownMethod(): Promise<Exchange> {
    return this.conn.call(NO_SUCH_METHOD, {}, { deliberate: true });
  }

  /** Pass when `ex` is a JSON-RPC error with `code` (and, when given, this HTTP status). */
  expectCode(ex: Exchange, code: number, what: string, status?: number): Verdict {
    const err = errorOf(ex.response);
    // Over stdio there is no HTTP status to ask for.
    const http = status !== undefined && !onPipe(ex) ? status : undefined;
    if (err?.code === code && statusIs(ex, http))
      return pass(`${what} got ${http ? `HTTP ${http}, ` : ''}error ${code}`);
    const got = answered(ex, this.secrets);
    return fail(`${what} got ${got}, not ${http ? `HTTP ${http} with ` : ''}error ${code}`, ex);
  }

  /** A bad request's answer, then the request proving the server survived it. */
  async badInput(what: string, send: () => Promise<Exchange>, code: number): Promise<Verdict> {
    const ex = await send();
    await this.stillAlive(what);
    return this.expectCode(ex, code, what);
  }
}

/** The result object of an answer, or an empty one. */
export function resultFields(ex: Exchange): Record<string, unknown> {
  return resultOf(ex.response) ?? {};
}

// The stateless generation (2026-07-28): one `server/discover` carrying the `_meta` envelope and
// the MCP-Protocol-Version and Mcp-Method headers. No initialize, no stream, no session.
import { CLIENT_INFO } from '../client-info';
import type { ProbeContext } from '../context';
import { discoverSignal } from '../era-signals';
import { delivered, type Exchange } from '../exchange';
import { errorOf, requestBody, resultOf } from '../jsonrpc';
import { failed, judge, type Opening, opened, serverInfoOf } from '../opening';
import { newestKnown, type Revision } from '../revisions';

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/** The params of a `server/discover` at `revision`: only the `_meta` envelope. */
export function discoverParams(revision: Revision): Record<string, unknown> {
  return { _meta: { [META.protocolVersion]: revision, [META.clientCapabilities]: {}, [META.clientInfo]: CLIENT_INFO } };
}

export async function openStateless(ctx: ProbeContext, revision: Revision): Promise<Opening> {
  const id = ctx.nextId();
  const ex = await ctx.send({
    method: 'POST',
    url: ctx.target,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': revision,
      'mcp-method': 'server/discover',
    },
    body: requestBody(id, 'server/discover', discoverParams(revision)),
    jsonRpcMethod: 'server/discover',
    jsonRpcId: id,
  });
  return discoverOpening(ex, id, revision, discoverSignal(ex));
}

/**
 * Judge a `server/discover` answer (HTTP or stdio: stdio/opening.ts): the revision the server chose
 * from its supportedVersions, or why the opening failed. `eraSignal`: the failure says the server
 * moved generation (each transport has its own signals: era-signals.ts).
 */
export function discoverOpening(ex: Exchange, id: number, revision: Revision, eraSignal: boolean): Opening {
  const what = 'server/discover';
  const result = resultOf(ex.response);
  if (!delivered(ex) || !result) {
    const err = errorOf(ex.response);
    const failure = judge(ex, what);
    // -32022 names what the server does speak; keep it so a pin can say what is offered instead.
    const offered = err?.code === -32022 ? supportedFrom(err.data) : undefined;
    const o = failed('stateless', revision, ex, failure, eraSignal);
    if (offered) o.answered = offered;
    return o;
  }
  if (ex.response && 'id' in ex.response && ex.response.id !== id)
    return failed(
      'stateless',
      revision,
      ex,
      { outcome: 'protocol_error', message: `${what}: the answer's JSON-RPC id does not match the request` },
      false,
    );
  const versions = Array.isArray(result.supportedVersions)
    ? result.supportedVersions.filter((v): v is string => typeof v === 'string')
    : undefined;
  if (!versions)
    return failed(
      'stateless',
      revision,
      ex,
      { outcome: 'protocol_error', message: `${what}: the result has no supportedVersions` },
      false,
    );
  const meta = (result._meta ?? {}) as Record<string, unknown>;
  const serverInfo = serverInfoOf(meta[META.serverInfo]);
  const answered = versions.includes(revision) ? revision : (newestKnown(versions) ?? versions[0] ?? 'none');
  return opened('stateless', revision, ex, answered, serverInfo);
}

function supportedFrom(data: unknown): string | undefined {
  const list = (data as { supported?: unknown } | undefined)?.supported;
  return Array.isArray(list) ? newestKnown(list.filter((v): v is string => typeof v === 'string')) : undefined;
}

// The baseline: the official v2 SDK `Client`, pinned to the same revision as our engine, doing
// connect + close — what a client of that server would do to open a conversation.

import { CLIENT_INFO, type Revision, revisionInfo } from '@mcp-fleet/probe';
import { Client, SSEClientTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

export async function sdkHandshake(url: string, revision: Revision): Promise<boolean> {
  const { generation } = revisionInfo(revision);
  const client =
    generation === 'stateless'
      ? new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: revision } } })
      : new Client(CLIENT_INFO, { supportedProtocolVersions: [revision] });
  const transport =
    generation === 'HTTP+SSE transport'
      ? new SSEClientTransport(new URL(url))
      : new StreamableHTTPClientTransport(new URL(url));
  try {
    await client.connect(transport);
    return client.getNegotiatedProtocolVersion() === revision;
  } finally {
    await client.close();
  }
}

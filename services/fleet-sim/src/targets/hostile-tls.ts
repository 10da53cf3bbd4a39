// HTTPS targets whose certificates a verifying client must refuse: self-signed, expired, and issued
// for another name. Behind the TLS each is an honest little MCP server (2026-07-28 server/discover,
// 2025-11-25 initialize), so a client that skips verification succeeds: the certificate is the only
// fault. The certificates are minted in memory per process (hostile-certs.ts, on certificates.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { Socket } from 'node:net';
import type { CertifiedKey } from '../certificates';
import { LOOPBACK } from '../serve';
import type { RunningTarget, TargetContext, TargetDefinition } from '../target';
import { type HostileCertificates, hostileCertificates } from './hostile-certs';

/** The sim's CA certificate (PEM), which issued hostile-tls-expired and hostile-tls-wrong-name. */
export function simCaCertificate(): string {
  return hostileCertificates().ca;
}

const MAX_BODY_BYTES = 64 * 1024;

async function readJson(req: IncomingMessage): Promise<{ id?: unknown; method?: unknown } | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** What an honest server behind the certificate answers. */
async function honest(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') {
    res.writeHead(405, { 'content-type': 'text/plain', allow: 'POST' });
    res.end('Method Not Allowed');
    return;
  }
  const msg = await readJson(req);
  const id = typeof msg?.id === 'number' || typeof msg?.id === 'string' ? msg.id : null;
  const serverInfo = { name: 'hostile-tls', version: '0.0.0' };
  if (msg?.method === 'server/discover')
    return json(res, 200, {
      jsonrpc: '2.0',
      id,
      result: {
        supportedVersions: ['2026-07-28'],
        capabilities: {},
        _meta: { 'io.modelcontextprotocol/serverInfo': serverInfo },
      },
    });
  if (msg?.method === 'initialize')
    return json(res, 200, {
      jsonrpc: '2.0',
      id,
      result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo },
    });
  if (typeof msg?.method === 'string' && msg.method.startsWith('notifications/')) {
    res.writeHead(202);
    res.end();
    return;
  }
  json(res, 400, { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } });
}

async function startTls(ctx: TargetContext, credentials: CertifiedKey): Promise<RunningTarget> {
  const server = createServer({ ...credentials }, (req, res) => {
    ctx.log.record(ctx.name, req);
    honest(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  // A client that refuses the certificate aborts the handshake: expected, not an error.
  server.on('tlsClientError', (_err, socket) => socket.destroy());
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    ctx.log.countConnection(ctx.name);
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(ctx.port, LOOPBACK, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as { port: number };
  let closing: Promise<void> | undefined;
  return {
    url: `https://${LOOPBACK}:${port}/mcp`,
    // A verifying client reaches nothing here.
    supports: () => [],
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

function tlsTarget(
  name: string,
  description: string,
  pick: (certs: HostileCertificates) => CertifiedKey,
): TargetDefinition {
  return { name, kind: 'odd', description, start: (ctx) => startTls(ctx, pick(hostileCertificates())) };
}

export const hostileTlsSelfSigned = tlsTarget(
  'hostile-tls-self-signed',
  'HTTPS on 127.0.0.1 with a valid but self-signed certificate; an honest MCP server behind it',
  (c) => c.selfSigned,
);

export const hostileTlsExpired = tlsTarget(
  'hostile-tls-expired',
  'HTTPS on 127.0.0.1 with a certificate from the sim CA that expired on 2020-01-02; an honest MCP server behind it',
  (c) => c.expired,
);

export const hostileTlsWrongName = tlsTarget(
  'hostile-tls-wrong-name',
  'HTTPS on 127.0.0.1 with a valid sim-CA certificate for wrong-name.invalid; an honest MCP server behind it',
  (c) => c.wrongName,
);

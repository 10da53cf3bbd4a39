// A plain loopback HTTP listener that records every request it gets (method, URL, headers, body):
// where a test sees what a probe actually sent, and to whom. It answers 404 unless told otherwise.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  /** The request target as sent: path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Recorder {
  port: number;
  /** `http://127.0.0.1:<port><path>`. */
  url(path?: string): string;
  requests: Recorded[];
  close(): Promise<void>;
}

export type Answer = (req: Recorded, res: ServerResponse) => void;

export async function startRecorder(answer?: Answer): Promise<Recorder> {
  const requests: Recorded[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      if (answer) answer(recorded, res);
      else res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (path = '/mcp') => `http://127.0.0.1:${port}${path}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

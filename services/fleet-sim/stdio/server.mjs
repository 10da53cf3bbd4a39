// The simulated fleet's stdio servers: one process per conversation, spoken to over stdin/stdout
// (newline-delimited JSON-RPC), logs on stderr. `node server.mjs <kind>`; the kinds are
// STDIO_SERVERS in ../src/stdio.ts.
//
// Plain JavaScript on purpose: a stdio probe's cost is dominated by starting the process, and real
// stdio servers ship as built JavaScript (`node dist/index.js`). Under tsx every start would pay a
// TypeScript loader the servers being monitored do not pay, and the bench would measure it. So the
// servers below repeat src/v2.ts's createV2Server and the sessions targets' echo tool (this file
// cannot import TypeScript): the same SDK calls, the same tool.
import { McpServer as McpServer2 } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { McpServer as McpServer1 } from 'mcp-sdk-1-32/server/mcp.js';
import { StdioServerTransport as StdioServerTransport1 } from 'mcp-sdk-1-32/server/stdio.js';
import * as z from 'zod';

const kind = process.argv[2] ?? '';

/** SDK 1.32: the legacy era only (initialize), the echo tool. */
async function v1(name) {
  const server = new McpServer1({ name, version: '1.32.2' });
  server.registerTool(
    'echo',
    { description: 'Echoes the given text.', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  await server.connect(new StdioServerTransport1());
  return server;
}

/** SDK 2.4's serveStdio: the opening exchange picks the era (server/discover or initialize). */
function v2(name, legacy) {
  serveStdio(
    () => {
      const server = new McpServer2({ name, version: '2.4.0' });
      server.registerTool(
        'echo',
        {
          description: 'Echoes the given text.',
          inputSchema: z.object({ text: z.string() }),
          annotations: { readOnlyHint: true },
        },
        async ({ text }) => ({ content: [{ type: 'text', text }] }),
      );
      return server;
    },
    { legacy },
  );
}

switch (kind) {
  case 'v1':
    await v1('stdio-v1');
    break;
  case 'v2':
    v2('stdio-v2', 'serve');
    break;
  case 'v2-modern-only':
    v2('stdio-v2-modern-only', 'reject');
    break;
  case 'logs-on-stdout':
    // The classic mistake: a console.log beside the protocol (stdout is reserved for JSON-RPC).
    console.log('stdio-logs-on-stdout: starting up');
    await v1('stdio-logs-on-stdout');
    console.log('stdio-logs-on-stdout: ready');
    break;
  case 'silent':
    // Reads everything, answers nothing; ends when stdin does.
    process.stdin.resume();
    process.stdin.on('end', () => process.exit(0));
    break;
  case 'floods-stdout': {
    // Endless log lines on stdout, as fast as the pipe takes them.
    const line = `${'flood '.repeat(10_000)}\n`;
    const pump = () => {
      while (process.stdout.write(line));
      process.stdout.once('drain', pump);
    };
    pump();
    break;
  }
  case 'exits-at-once':
    process.stderr.write('stdio-exits-at-once: missing configuration, giving up\n');
    process.exit(3);
    break;
  case 'ignores-sigterm':
    // Speaks MCP, but neither stdin closing nor SIGTERM ends it: only SIGKILL does.
    process.on('SIGTERM', () => process.stderr.write('stdio-ignores-sigterm: SIGTERM ignored\n'));
    setInterval(() => {}, 60_000);
    await v1('stdio-ignores-sigterm');
    process.stdin.on('end', () => process.stderr.write('stdio-ignores-sigterm: stdin closed, staying up\n'));
    break;
  default:
    process.stderr.write(`unknown stdio server kind: ${kind}\n`);
    process.exit(2);
}

// The monitor as an MCP server: one SDK v2 McpServer per serving unit (an HTTP request under
// createMcpHandler, a connection under serveStdio), with the tools the caller's scope may use, the
// resources and the prompt. Control serves it at /mcp (endpoint.ts); `mcp-fleet mcp` over stdio.
import { createHash } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/server';
import pkg from '../../package.json' with { type: 'json' };
import { ApiCallError, type ApiCaller } from './caller';
import { registerPrompts } from './prompts';
import type { DetectionLimiter } from './rate-limit';
import { registerResources } from './resources';
import { ToolError, toolsFor } from './tools';

export const MONITOR_VERSION: string = pkg.version;

export interface MonitorMcpOptions {
  caller: ApiCaller;
  /** Bounds the detection tools per principal; none = unbounded (tests, a trusted stdio user). */
  limiter?: DetectionLimiter | undefined;
  /** Whose calls these are, for the limiter: a token's digest or a client's address. */
  principal?: string;
  /** Hears each tool call's outcome (control counts them in mcp_fleet_tool_calls_total). */
  onCall?: (tool: string, outcome: ToolOutcome) => void;
}

export type ToolOutcome = 'ok' | 'error' | 'rate_limited';

/** A principal's name for a bearer token: a digest, never the token. */
export function tokenPrincipal(token: string): string {
  return `token:${createHash('sha256').update(token).digest('hex').slice(0, 16)}`;
}

export function monitorMcpServer(opts: MonitorMcpOptions): McpServer {
  const { caller, limiter } = opts;
  const heard = (tool: string, outcome: ToolOutcome) => opts.onCall?.(tool, outcome);
  const principal = opts.principal ?? 'local';
  const server = new McpServer(
    { name: 'mcp-fleet', title: 'mcp-fleet monitor', version: MONITOR_VERSION },
    {
      instructions:
        'mcp-fleet watches which MCP protocol revisions a fleet of MCP servers speaks, from several regions. ' +
        'Start with get_fleet_summary or list_servers; get_server and the investigate_era_move prompt explain one server.',
    },
  );
  for (const tool of toolsFor(caller.scope)) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.inputSchema,
        outputSchema: tool.outputSchema,
        annotations: { title: tool.title, ...tool.annotations },
      },
      async (args: unknown) => {
        if (tool.limited && limiter) {
          const wait = limiter.take(principal);
          if (wait !== null) {
            heard(tool.name, 'rate_limited');
            return refused(
              `rate limited: ${tool.name} is admitted ${limiter.limits.perMinute} times a minute ` +
                `(${limiter.limits.burst} at once) per caller; try again in ${wait} s`,
            );
          }
        }
        try {
          const out = await tool.run(caller, args as never);
          heard(tool.name, 'ok');
          return { content: [{ type: 'text' as const, text: JSON.stringify(out) }], structuredContent: out };
        } catch (err) {
          heard(tool.name, 'error');
          // The API's refusals (400 with the field, 404, 409, 422 for a pin that fails today) are the
          // agent's to read and act on: a tool error with the API's own sentence, never a stack.
          if (err instanceof ApiCallError) return refused(`${err.message} (HTTP ${err.status})`);
          if (err instanceof ToolError) return refused(err.message);
          throw err;
        }
      },
    );
  }
  registerResources(server, caller);
  registerPrompts(server, caller);
  return server;
}

function refused(text: string) {
  return { isError: true, content: [{ type: 'text' as const, text }] };
}

/**
 * The one tool every SDK target registers, so each is a realistic server with a tool list.
 * The 1.x SDKs before 1.32 bundle zod 3, so they get this hand-written JSON schema through
 * their low-level Server instead of a zod shape.
 */
export const ECHO_TOOL = {
  name: 'echo',
  description: 'Echoes the given text.',
  inputSchema: {
    type: 'object' as const,
    properties: { text: { type: 'string' } },
    required: ['text'],
  },
};

export function echo(args: Record<string, unknown> | undefined): { content: { type: 'text'; text: string }[] } {
  return { content: [{ type: 'text', text: String(args?.text ?? '') }] };
}

/**
 * tools/call as these low-level servers answer it: the echo tool, and for any other name the error
 * the SDKs' own McpServer gives an unknown tool (-32602; the SDK's Protocol sends a thrown error's
 * numeric `code` as the JSON-RPC code).
 */
export function callEcho(params: { name: string; arguments?: Record<string, unknown> | undefined }) {
  if (params.name !== ECHO_TOOL.name)
    throw Object.assign(new Error(`MCP error -32602: Tool ${params.name} not found`), { code: -32602 });
  return echo(params.arguments);
}

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

/**
 * A tools/call of the low-level servers: the echo tool, and for any other name the tool error the
 * spec's legacy revisions describe (a result with isError), as McpServer 1.32 answers it. Calling
 * a tool that does not exist must not look like success (conformance: invalid_tool_returns_error).
 */
export function echo(params: { name: string; arguments?: Record<string, unknown> | undefined }): {
  content: { type: 'text'; text: string }[];
  isError?: true;
} {
  if (params.name !== ECHO_TOOL.name) {
    return { content: [{ type: 'text', text: `Tool ${params.name} not found` }], isError: true };
  }
  return { content: [{ type: 'text', text: String(params.arguments?.text ?? '') }] };
}

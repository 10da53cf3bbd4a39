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

/**
 * The SDK releases the targets are built with; each target's serverInfo.version names its SDK.
 * test/sim.test.ts checks these against the installed packages.
 */
export const SDK_VERSIONS = {
  'mcp-sdk-1-9': '1.9.0',
  'mcp-sdk-1-10': '1.10.2',
  'mcp-sdk-1-12': '1.12.3',
  'mcp-sdk-1-17': '1.17.5',
  'mcp-sdk-1-32': '1.32.2',
  '@modelcontextprotocol/server': '2.4.0',
} as const;

import pkg from '../package.json' with { type: 'json' };

/** How mcp-fleet identifies itself to every server, in every generation. */
export const CLIENT_INFO = { name: 'mcp-fleet', version: pkg.version } as const;

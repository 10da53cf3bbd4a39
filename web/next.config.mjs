// The dashboard reads through @mcp-fleet/store, whose TypeScript Next compiles with the app;
// the database drivers and the probe's HTTP client stay ordinary Node packages. Plain JavaScript,
// which Next loads as it is. (Anti-framing headers: index.ts sets them on every answer.)

/** @type {import('next').NextConfig} */
const config = {
  transpilePackages: ['@mcp-fleet/store', '@mcp-fleet/auth', '@mcp-fleet/probe'],
  serverExternalPackages: ['@electric-sql/pglite', 'pg', 'drizzle-orm', 'undici', 'eventsource-parser'],
  poweredByHeader: false,
  // `npm test` type-checks the workspace with tsc; the build need not do it twice.
  typescript: { ignoreBuildErrors: true },
};

export default config;

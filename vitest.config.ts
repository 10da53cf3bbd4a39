import { defineConfig } from 'vitest/config';
import SummaryReporter from './tools/summary-reporter.ts';

export default defineConfig({
  test: {
    include: ['services/*/test/**/*.test.ts', 'web/test/**/*.test.ts', 'deploy/test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Test files start their own fleets on ephemeral loopback ports, so they can run side by side.
    pool: 'forks',
    // Tests never leave loopback: a connection anywhere else fails the test (see the file).
    setupFiles: ['services/testkit/src/loopback-guard.ts'],
    // The key that seals stored credentials in the processes tests start (a CLI verb, a dashboard:
    // they read their environment). Stores a test opens take it from testkit's testKeyring(), the same key.
    env: { MCP_FLEET_SECRET_KEY: 'dGVzdHMgb25seTogbWNwLWZsZWV0IHRlc3Qga2V5ISE=' },
    reporters: [process.env.CI ? 'verbose' : 'default', new SummaryReporter()],
  },
});

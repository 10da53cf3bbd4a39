import { defineConfig } from 'vitest/config';
import SummaryReporter from './tools/summary-reporter.ts';

export default defineConfig({
  test: {
    include: ['services/*/test/**/*.test.ts', 'web/test/**/*.test.ts', 'deploy/test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Test files start their own fleets on ephemeral loopback ports, so they can run side by side.
    pool: 'forks',
    reporters: [process.env.CI ? 'verbose' : 'default', new SummaryReporter()],
  },
});

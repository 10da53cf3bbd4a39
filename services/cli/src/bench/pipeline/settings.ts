// What a bench:pipeline run is told (the environment, read once in main.ts) and the constants every
// part shares: where Postgres and NATS are, the goal a pass is judged by, how the bench speaks.
import { createLogger, type Logger } from '@mcp-fleet/log';

export const REGION = 'bench';
export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const ADMIN_URL = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** The cheap fleet listens on loopback: the agents' floor (public addresses only by default) must allow it. */
export const LOOPBACK_FLOOR = { allow: ['127.0.0.0/8'], deny: [] };
/** The goal this benchmark exists for (issue 19): 1,000 jobs/s end to end with slot→row p99 under 2 s. */
export const GOAL_P99_MS = 2_000;
export const GOAL_JOBS_PER_S = 1_000;
/** A pass keeps up when it does at least this share of its target rate. */
export const KEEP_UP = 0.95;

export interface Config {
  targets: number;
  intervalS: number;
  seconds: number;
  /** Default: one interval. */
  warmupS: number | undefined;
  agentProcs: number;
  agentConcurrency: number | undefined;
  ingestConcurrency: number | undefined;
  drainS: number;
  /** Control's /metrics scraped every this many seconds through the pass; 0: never (but at the window's ends). */
  scrapeS: number;
}

/** Logs go to stderr, so `--json` keeps stdout to itself; only warnings and worse. */
export function benchLogger(name: string): Logger {
  return createLogger(name, (process.env.LOG_LEVEL as 'warn' | undefined) ?? 'warn', process.stderr);
}

export function note(line: string): void {
  process.stderr.write(`${line}\n`);
}

export function round(n: number): number {
  return Math.round(n * 10) / 10;
}

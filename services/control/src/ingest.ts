// Results ingest: write each run once (idempotent by job id), move the test's current revision,
// record era moves, and ack only after the database commit. A database that is away makes
// results wait in the bus (nak with backoff); a result the database can never take is rejected.
import type { Bus, Delivery, Result, Subscription } from '@mcp-fleet/bus';
import { isRevision, type Revision } from '@mcp-fleet/probe';
import type { ControlMetrics } from './metrics';

export interface RecordedRun {
  duplicate: boolean;
  eraMove: { from: string; to: string; downgrade: boolean; eraChanged: boolean } | null;
}

/** What ingest needs from the store. */
export interface IngestStore {
  recordRun(input: {
    jobId: string;
    testId: string;
    serverId: string;
    region: string;
    agent: string;
    scheduledAt: Date;
    startedAt: Date;
    finishedAt: Date;
    traceId: string | null;
    run: NonNullable<Result['run']>;
  }): Promise<RecordedRun>;
  recordDetection(input: {
    jobId: string | null;
    serverId: string;
    region: string | null;
    detection: NonNullable<Result['detection']>;
  }): Promise<{ duplicate: boolean }>;
}

export interface IngestOptions {
  bus: Bus;
  store: IngestStore;
  metrics: ControlMetrics;
  concurrency?: number;
  /** Told of every committed run, so the scheduler's view of current revisions stays fresh. */
  onRun?: (testId: string, region: string, negotiated: Revision | null) => void;
  log: { warn: (obj: object, msg: string) => void; error: (obj: object, msg: string) => void };
}

/** Postgres error classes that mean the row itself is wrong (data, integrity): retrying cannot help. */
const PERMANENT_SQLSTATE = /^(22|23)/;

export function startIngest(opts: IngestOptions): Subscription {
  return opts.bus.consumeResults((d) => ingestOne(d, opts), { concurrency: opts.concurrency ?? 8 });
}

async function ingestOne(d: Delivery<Result>, opts: IngestOptions): Promise<void> {
  const r = d.value;
  try {
    if (r.kind === 'handshake' && r.run && r.testId) {
      const out = await opts.store.recordRun({
        jobId: r.jobId,
        testId: r.testId,
        serverId: r.serverId,
        region: r.region,
        agent: r.agent,
        scheduledAt: new Date(r.scheduledAt),
        startedAt: new Date(r.startedAt),
        finishedAt: new Date(r.finishedAt),
        traceId: r.traceId,
        run: r.run,
      });
      opts.metrics.ingest.inc({ kind: r.kind, result: out.duplicate ? 'duplicate' : 'written' });
      if (out.eraMove)
        opts.metrics.moves.inc({ from_revision: out.eraMove.from, to_revision: out.eraMove.to, region: r.region });
      if (!out.duplicate) opts.onRun?.(r.testId, r.region, isRevision(r.run.negotiated) ? r.run.negotiated : null);
    } else if (r.kind === 'detection' && r.detection) {
      const out = await opts.store.recordDetection({
        jobId: r.jobId,
        serverId: r.serverId,
        region: r.region,
        detection: r.detection,
      });
      opts.metrics.ingest.inc({ kind: r.kind, result: out.duplicate ? 'duplicate' : 'written' });
    } else {
      opts.metrics.ingest.inc({ kind: r.kind, result: 'rejected' });
      await d.term('a handshake result without a test id');
      return;
    }
    await d.ack();
  } catch (err) {
    const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code ?? '';
    if (PERMANENT_SQLSTATE.test(code)) {
      opts.metrics.ingest.inc({ kind: r.kind, result: 'rejected' });
      opts.log.error({ jobId: r.jobId, code, err: (err as Error).message }, 'result rejected by the database');
      await d.term(`database rejected the result (${code})`);
      return;
    }
    opts.metrics.ingest.inc({ kind: r.kind, result: 'retried' });
    opts.log.warn(
      { jobId: r.jobId, err: (err as Error).message, redeliveries: d.redeliveries },
      'ingest failed; the result waits in the bus',
    );
    await d.nak(Math.min(30_000, 1_000 * 2 ** d.redeliveries));
  }
}

// Old history pruned at start and every hour: runs and detections by when control received them,
// agents by when control last heard them (store's retention.ts). Before each prune, the runs' day
// partitions for today and the days ahead are made (store's partitions.ts): a run of a day not
// made yet still lands (in the default partition), but costs the prune a row-wise delete.
import type { Logger } from '@mcp-fleet/log';
import {
  type Db,
  DEFAULT_RUN_RETENTION_DAYS,
  ensureRunPartitions,
  pruneHistory,
  retentionCutoffs,
} from '@mcp-fleet/store';

const PRUNE_EVERY_MS = 3_600_000;

export function startPruning(db: Db, log: Logger, retentionDays = DEFAULT_RUN_RETENTION_DAYS): { stop(): void } {
  const prune = () =>
    ensureRunPartitions(db)
      .then((made) => made.length > 0 && log.info({ partitions: made }, 'made the runs partitions of the days ahead'))
      .catch((err) => log.warn({ err: (err as Error).message }, 'could not make the runs partitions ahead'))
      .then(() => pruneHistory(db, retentionCutoffs(retentionDays)))
      .then(
        (pruned) =>
          (pruned.runs > 0 || pruned.checkChanges > 0 || pruned.detections > 0 || pruned.agents > 0) &&
          log.info(
            { ...pruned, retentionDays },
            'pruned old runs (with their check changes), detections and silent agents',
          ),
      )
      .catch((err) => log.warn({ err: (err as Error).message }, 'could not prune old history'));
  const timer = setInterval(prune, PRUNE_EVERY_MS);
  timer.unref();
  void prune();
  return { stop: () => clearInterval(timer) };
}

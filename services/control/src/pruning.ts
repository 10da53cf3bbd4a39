// Old history pruned at start and every hour: runs and detections by when control received them,
// agents by when control last heard them (store's retention.ts).
import type { Logger } from '@mcp-fleet/log';
import { type Db, DEFAULT_RUN_RETENTION_DAYS, pruneHistory, retentionCutoffs } from '@mcp-fleet/store';

const PRUNE_EVERY_MS = 3_600_000;

export function startPruning(db: Db, log: Logger, retentionDays = DEFAULT_RUN_RETENTION_DAYS): { stop(): void } {
  const prune = () =>
    pruneHistory(db, retentionCutoffs(retentionDays))
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

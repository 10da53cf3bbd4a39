// What control's bus saw, read by wrapping the Bus control is given (so control needs no hook):
// each job the bus accepted (scheduling lag = accepted − slot start) and each result ingest committed.
import type { Bus, Delivery, Job, NatsBus, Result } from '@mcp-fleet/bus';

/** What control's bus saw: each job accepted (lag = accepted − slot), each result committed. */
export function observeControlBus(bus: NatsBus) {
  const published = new Map<string, { slot: number; at: number }>();
  const committed = new Map<string, { slot: number; finishedAt: number; at: number }>();
  let publishErrors = 0;
  let resultRepeats = 0;
  const wrapped: Bus = {
    ...bus,
    async publishJob(job: Job) {
      try {
        const out = await bus.publishJob(job);
        if (!out.duplicate) published.set(job.jobId, { slot: job.slot, at: Date.now() });
        return out;
      } catch (err) {
        publishErrors += 1;
        throw err;
      }
    },
    consumeResults: (handler, opts) =>
      bus.consumeResults((d: Delivery<Result>) => {
        const r = d.value;
        // Ingest acks only after its commit (or after finding the run already written).
        const ack = async () => {
          if (committed.has(r.jobId)) resultRepeats += 1;
          else committed.set(r.jobId, { slot: r.slot, finishedAt: Date.parse(r.finishedAt), at: Date.now() });
          return d.ack();
        };
        return handler({
          value: r,
          redeliveries: d.redeliveries,
          ack,
          nak: (ms) => d.nak(ms),
          term: (reason) => d.term(reason),
          working: () => d.working(),
        });
      }, opts),
  };
  return { bus: wrapped, published, committed, errors: () => publishErrors, resultRepeats: () => resultRepeats };
}

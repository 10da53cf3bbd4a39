// The in-process jobs' dedupe (NATS: the jobs stream's duplicate window on Nats-Msg-Id = job id).

/** Job ids seen within the window; a Map keeps insertion order, which is expiry order. */
export class Dedupe {
  private seen = new Map<string, number>();
  constructor(private windowMs: number) {}
  duplicate(id: string, now = Date.now()): boolean {
    for (const [key, expires] of this.seen) {
      if (expires > now) break;
      this.seen.delete(key);
    }
    if (this.seen.has(id)) return true;
    this.seen.set(id, now + this.windowMs);
    return false;
  }
}

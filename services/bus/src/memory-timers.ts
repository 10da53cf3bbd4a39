// The in-process queue's timers (ack waits, delayed redeliveries): each unref'd and tracked, so the
// queue never keeps the process alive and close() clears them all.
export class Timers {
  private readonly live = new Set<NodeJS.Timeout>();

  later(ms: number, fn: () => void): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.live.delete(timer);
      fn();
    }, ms);
    timer.unref();
    this.live.add(timer);
    return timer;
  }

  cancel(timer: NodeJS.Timeout | undefined): void {
    if (!timer) return;
    clearTimeout(timer);
    this.live.delete(timer);
  }

  clear(): void {
    for (const timer of this.live) clearTimeout(timer);
    this.live.clear();
  }
}

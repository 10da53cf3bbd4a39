// Ctrl-C during a run: sleeps are cut short and the pass in progress stops at its next check, so
// cleanup (databases, streams, processes) starts at once.
let aborted = false;
let wakeSleepers: (() => void)[] = [];

export class Interrupted extends Error {}

export function isAborted(): boolean {
  return aborted;
}

export function abort(): void {
  aborted = true;
  for (const w of [...wakeSleepers]) w();
}

export function throwIfAborted(): void {
  if (aborted) throw new Interrupted('interrupted');
}

/** Sleeps that Ctrl-C cuts short. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    if (aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      wakeSleepers = wakeSleepers.filter((w) => w !== done);
      resolve();
    }
    wakeSleepers.push(done);
  });
}

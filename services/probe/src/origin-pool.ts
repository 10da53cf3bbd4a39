// The connections to one origin, for the probes' undici Agents (exchange.ts, target-policy.ts).
//
// Undici's Agent keeps one Pool per origin, and every Pool starts with a queue of 2,048 slots
// (16 KiB) for requests waiting on a connection. A probe's pools have no connection limit, so a
// request never waits: the pool opens another connection instead, and that queue stays empty for
// its whole life. Yet an agent probing a thousand slow servers holds a thousand of them (16 MB of
// its 200 MB budget), and the Agent drops an origin's pool when its last connection closes (a test
// probed less often than the keep-alive), so each probe made one anew: 16 KiB that outlives the
// young generation when the probe is slow (bench:memory, README). This pool is undici's Pool with
// that queue swapped for a plain array, which costs nothing while empty. Undici has no option for
// it, hence the swap by the queue's symbol: origin-pool.test.ts fails if an undici update renames
// it or changes what a pool asks of its queue, and until then the pool keeps undici's own.
import { Pool } from 'undici';

type Waiting = unknown;

/** The FixedQueue methods PoolBase calls (undici/lib/dispatcher/pool-base.js). */
class ArrayQueue {
  #items: Waiting[] = [];
  isEmpty(): boolean {
    return this.#items.length === 0;
  }
  push(item: Waiting): void {
    this.#items.push(item);
  }
  shift(): Waiting | null {
    return this.#items.length === 0 ? null : this.#items.shift();
  }
}

function isQueue(value: unknown): boolean {
  const q = value as Partial<ArrayQueue> | undefined;
  return typeof q?.isEmpty === 'function' && typeof q.push === 'function' && typeof q.shift === 'function';
}

/** The symbol undici's PoolBase keeps its queue under, found once; undefined if undici changed. */
let queueSymbol: symbol | undefined | null = null;

function findQueueSymbol(pool: Pool): symbol | undefined {
  if (queueSymbol === null) {
    const own = Object.getOwnPropertySymbols(pool).filter((s) => s.description === 'queue');
    queueSymbol =
      own.length === 1 && isQueue((pool as unknown as Record<symbol, unknown>)[own[0]!]) ? own[0] : undefined;
  }
  return queueSymbol;
}

export class OriginPool extends Pool {
  constructor(origin: string | URL, options?: Pool.Options) {
    super(origin, options);
    const symbol = findQueueSymbol(this);
    if (symbol) (this as unknown as Record<symbol, unknown>)[symbol] = new ArrayQueue();
  }

  /** Whether this pool's queue is the plain array (false: undici changed, and it keeps its own). */
  get leanQueue(): boolean {
    const symbol = findQueueSymbol(this);
    return symbol !== undefined && (this as unknown as Record<symbol, unknown>)[symbol] instanceof ArrayQueue;
  }
}

/** An Agent's factory: an OriginPool per origin (undici's default makes a Client when connections is 1). */
export function originPool(origin: string | URL, options: object): Pool {
  return new OriginPool(origin, options as Pool.Options);
}

// "I am here, in this region, at this version, with this many jobs in hand": control lists agents
// (and notices a silent one) from these. A failed heartbeat is logged and the next one tries again.
import type { Bus, Heartbeat } from '@mcp-fleet/bus';

export interface Heartbeats {
  /** Stop the timer and send one last heartbeat. */
  stop(): Promise<void>;
}

export function startHeartbeats(opts: {
  bus: Bus;
  everyMs: number;
  beat: () => Heartbeat;
  onError: (err: unknown) => void;
}): Heartbeats {
  const send = async () => {
    try {
      await opts.bus.publishHeartbeat(opts.beat());
    } catch (err) {
      opts.onError(err);
    }
  };
  void send();
  const timer = setInterval(() => void send(), opts.everyMs);
  timer.unref();
  let stopped: Promise<void> | undefined;
  return {
    stop() {
      clearInterval(timer);
      stopped ??= send();
      return stopped;
    },
  };
}

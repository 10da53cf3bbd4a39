// Heartbeats on core NATS, not on a stream: a missed one is replaced by the next. Each listener
// has its own subscription to every region's heartbeats.
import type { NatsConnection } from '@nats-io/transport-node';
import type { Subscription } from './bus';
import type { Context } from './delivery';
import { type HeartbeatListener, receiveHeartbeat } from './heartbeats';
import { encodeMessage, type Heartbeat, HeartbeatSchema } from './messages';
import type { NatsNames } from './nats-streams';

export function publishHeartbeat(nc: NatsConnection, names: NatsNames, heartbeat: Heartbeat): void {
  const { value, data } = encodeMessage(HeartbeatSchema, heartbeat, 'heartbeat');
  nc.publish(names.heartbeats(value.region), data);
}

export function listenForHeartbeats(
  nc: NatsConnection,
  names: NatsNames,
  listener: HeartbeatListener,
  ctx: Context,
): Subscription {
  const sub = nc.subscribe(names.allHeartbeats, {
    callback: (err, msg) => {
      if (!err) receiveHeartbeat(msg.subject, msg.data, [listener], ctx);
    },
  });
  return {
    stop: async () => {
      if (!sub.isClosed()) sub.unsubscribe();
    },
  };
}

// @mcp-fleet/bus: the job and result messages and the queue they travel on.

export { NAK_BASE_MS, NAK_MAX_MS, nakBackoff, nakDelayMs } from './backoff';
export type { Bus, BusStats, Concurrency, ConsumeOptions, Delivery, Handler, Subscription } from './bus';
export { createMemoryBus, type MemoryBus, type MemoryBusOptions } from './memory';
export {
  assertRegion,
  DetectionSchema,
  encodeMessage,
  HandshakeRunSchema,
  HEARTBEAT_STDIO_BOUNDS,
  type Heartbeat,
  HeartbeatSchema,
  InvalidMessageError,
  type Job,
  JobSchema,
  parseMessage,
  RegionSchema,
  type Result,
  ResultSchema,
  ScriptRunSchema,
  ScriptSchema,
  SUBJECTS,
  SurfaceSnapshotSchema,
  subjects,
} from './messages';
export { connectNatsBus, type NatsBus, type NatsBusOptions } from './nats';
export { type NatsCredentials, natsConnectionOptions } from './nats-connect';
export { type NatsNames, natsNames } from './nats-streams';
export { type OpenBusOptions, openBus } from './open';
export { BUS_DEFAULTS, type QueueOptions } from './options';

// @mcp-fleet/store: the schema, opening the database, and the queries the other parts need.
// Every query takes the drizzle handle (`store.db`, or a transaction) as its first argument.
export * from './agents';
export * from './check-states';
export * from './conformance';
export * from './conformance-reads';
export * from './connect';
export * from './consensus';
export * from './cursor';
export * from './data-age';
export { assertDataDirFree, DataDirInUseError } from './data-dir-lock';
export type { Db, Schema } from './db';
export * from './disagreements';
export * from './downgrades';
export * from './drift';
export { DuplicateNameError, UnknownRecordError } from './errors';
export * from './fleet';
export * from './ingest';
export * from './kept-credentials';
export * from './latency';
export * from './reads';
export * from './retention';
export * from './schema';
export * as schema from './schema';
export * from './server-health';
export * from './servers-page';
export * from './surface-ingest';
export * from './surface-reads';
export * from './uptime';

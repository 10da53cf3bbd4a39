export { makeTestCa, type TestCa } from './certs';
export { TEST_SECRET_KEY, testKeyring } from './keyring';
export { LOOPBACK_FLOOR } from './loopback-floor';
export { parseMetrics, type Sample, seriesValue } from './metrics-text';
export { NATS_SERVER_BIN, type NatsServer, type NatsServerOptions, startNatsServer } from './nats-server';
export { accepts, freePort, freePortRun } from './net';
export { ADMIN_URL, admin, createTestDatabase, type TestDatabase } from './postgres';
export { type Answer, type Recorded, type Recorder, startRecorder } from './recorder';
export { waitFor } from './wait';

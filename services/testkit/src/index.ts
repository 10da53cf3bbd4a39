export { haveOpenssl, makeTestCa, type TestCa } from './certs';
export { parseMetrics, type Sample, seriesValue } from './metrics-text';
export { ADMIN_URL, admin, createTestDatabase, type TestDatabase } from './postgres';
export { waitFor } from './wait';

// A first start of the embedded database, in a short-lived process of its own (connect.ts spawns
// it): initdb and the migrations grow PGlite's WebAssembly memory to several hundred MB, and a
// WebAssembly memory never shrinks, so done in the monitor's process they would stay in its RSS
// for good. Here they go away with this process; the monitor then opens a ready directory.
// Plain JavaScript, run by node as it is: no loader needed, whoever spawns it.
//
//   node pglite-first-start.mjs <dataDir> <migrationsDir|''> <shared_buffers|''>
// An empty migrationsDir: only the cluster (a test migrates an older schema itself).
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';

const [dataDir, migrationsFolder, sharedBuffers] = process.argv.slice(2);
if (!dataDir || migrationsFolder === undefined) {
  process.stderr.write("usage: pglite-first-start.mjs <dataDir> <migrationsDir|''> [shared_buffers]\n");
  process.exit(2);
}
const startParams = sharedBuffers
  ? [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`]
  : PGlite.defaultStartParams;
const client = await PGlite.create(dataDir, { startParams });
try {
  if (migrationsFolder) await migrate(drizzle({ client }), { migrationsFolder });
} finally {
  await client.close();
}

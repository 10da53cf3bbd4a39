// drizzle-kit writes the SQL migrations into the repository's top-level /migrations, which both
// Postgres and embedded PGlite apply (connect.ts).
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/schema.ts',
  out: '../../migrations',
});

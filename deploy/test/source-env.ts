// The environment variables our code reads, found in its source: deploy files may set only these.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SECRET_FILE_VARIABLES } from '@mcp-fleet/auth/api-tokens';

export const REPO = join(import.meta.dirname, '..', '..');

/** Read by Next.js itself (the dashboard's own server, web/serve.ts, hands requests to it). */
const NEXT_READS = ['PORT', 'HOSTNAME', 'NODE_ENV', 'NEXT_TELEMETRY_DISABLED'];

export function envNamesReadByCode(): Set<string> {
  // Each secret's file, read through store's withSecretFiles (the names are built, not written out).
  const names = new Set([...NEXT_READS, ...SECRET_FILE_VARIABLES.map((n) => `${n}_FILE`)]);
  const roots = ['services', 'web/app', 'web/lib', 'web/index.ts', 'web/serve.ts'].map((r) => join(REPO, r));
  const patterns = [
    /\benv\.([A-Z][A-Z0-9_]+)/g,
    /\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g,
    /\bget\(['"]([A-Z][A-Z0-9_]+)['"]\)/g,
    // Names kept in tables or constants and read through env[name].
    /['"`]((?:MCP_FLEET|NATS|DATABASE|OTEL|PG)_[A-Z0-9_]+)['"`]/g,
  ];
  for (const file of sourceFiles(roots))
    for (const p of patterns) for (const m of readFileSync(file, 'utf8').matchAll(p)) names.add(m[1]!);
  return names;
}

function sourceFiles(roots: string[]): string[] {
  const out: string[] = [];
  const walk = (path: string) => {
    const st = statSync(path);
    if (st.isFile()) {
      if (/\.(ts|tsx)$/.test(path) && !path.includes('/test/')) out.push(path);
      return;
    }
    for (const entry of readdirSync(path)) if (entry !== 'node_modules' && entry !== '.next') walk(join(path, entry));
  };
  for (const r of roots) walk(r);
  return out;
}

// `npm run build:agent`: the mcp-fleet command bundled into plain JavaScript under services/cli/dist,
// which the image's launcher (bin/mcp-fleet.sh) runs an agent from. Run through tsx, a process also
// holds tsx's loader (a thread with a heap of its own) and its transform service: some 40 MB of an
// agent's 200 MB budget (bench:memory). Our workspace packages are bundled (they are TypeScript);
// every other package stays an import, resolved from node_modules as when run from the sources.
// Each verb is a chunk of its own (main.ts imports verbs when they run), so an agent loads its own.
// esbuild, because tsx runs on it already.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const OUR_PACKAGES = '@mcp-fleet/';
/** Where the image's launcher looks for the bundle: dist/run.js beside bin/. */
export const DIST = fileURLToPath(new URL('../dist', import.meta.url));
export const ENTRY = fileURLToPath(new URL('./run.ts', import.meta.url));

/** Bundles `entry` (and what it imports of ours) into `outdir`, `<entry's name>.js` plus chunks. */
export async function bundle(entry: string, outdir: string): Promise<void> {
  await build({
    entryPoints: [entry],
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    plugins: [
      {
        name: 'only-ours',
        setup(b) {
          // Bare imports (packages, node's builtins) stay imports, but for our own.
          b.onResolve({ filter: /^[^./]/ }, (a) => (a.path.startsWith(OUR_PACKAGES) ? undefined : { external: true }));
        },
      },
    ],
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // Chunks are named by their content: a former build's would stay beside the new ones.
  rmSync(DIST, { recursive: true, force: true });
  await bundle(ENTRY, DIST);
  process.stdout.write(`bundled the mcp-fleet command into ${DIST}\n`);
}

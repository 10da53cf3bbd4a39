#!/usr/bin/env node
// `npm start`: build the dashboard if its sources changed (turbo decides, and caches), then run
// `mcp-fleet up`. turbo's banner and task summary are for developers: the operator sees one line
// while a build actually takes time, turbo's output only if the build fails, then what `up` says.
// Plain JavaScript: it runs before anything else is built or registered.
//
// package.json runs it with two V8 flags for the one-machine monitor's memory (bench:memory,
// README "Benchmarks"); they cannot be set from inside a running process:
//   --max-semi-space-size=2  young generation of 2 MB semi-spaces instead of up to 16 MB each:
//                            the monitor allocates little per second, so more frequent scavenges
//                            cost next to nothing, and some 40 MB of RSS stay free.
//   --liftoff-only           WebAssembly (embedded PGlite, undici's HTTP parser) stays on V8's
//                            baseline compiler: optimising Postgres's hot functions with TurboFan
//                            holds some 25 MB of compiler memory for good, and on two cores the
//                            compiling costs more than it gains (store/test/measure-pglite.ts
//                            ingested faster without it).
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Past this, a build is not a cache hit: say what the wait is. */
const SAY_AFTER_MS = 1500;

const started = Date.now();
const building = setTimeout(
  () => process.stdout.write('building the dashboard (the first start takes a minute; later starts reuse it)…\n'),
  SAY_AFTER_MS,
);
const turbo = spawn(
  process.execPath,
  [
    join(ROOT, 'node_modules', 'turbo', 'bin', 'turbo'),
    'run',
    'build',
    '--filter=@mcp-fleet/web',
    '--output-logs=errors-only',
  ],
  { cwd: ROOT, env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', NEXT_TELEMETRY_DISABLED: '1' }, stdio: 'pipe' },
);
let output = '';
const keep = (/** @type {Buffer} */ chunk) => {
  output = (output + chunk.toString()).slice(-20_000);
};
turbo.stdout.on('data', keep);
turbo.stderr.on('data', keep);
// A Ctrl-C during the build reaches turbo too (same terminal): stop with it, quietly.
const quiet = () => {};
process.on('SIGINT', quiet);
const code = await new Promise((resolve) => turbo.on('exit', (c, signal) => resolve(signal ? 130 : (c ?? 1))));
process.off('SIGINT', quiet);
clearTimeout(building);
if (code !== 0) {
  if (code !== 130) process.stderr.write(`${output}\nnpm start: building the dashboard failed (exit ${code})\n`);
  process.exit(code);
}
if (Date.now() - started > SAY_AFTER_MS)
  process.stdout.write(`dashboard built in ${Math.round((Date.now() - started) / 1000)} s\n`);

// `mcp-fleet up` in this very process: no second process, so Ctrl-C, SIGTERM and SIGHUP reach it
// exactly as when it is run directly. What the bin does (register tsx, run main), with one change:
// no source maps. tsx turns them on, and node then keeps the map of every module it loads (each
// TypeScript file's, and those of Next's and PGlite's bundles), some 40 MB that the one-machine
// monitor never uses but for stack traces, whose lines then point into the transformed code
// (bench:memory). `mcp-fleet up` itself keeps them.
const bin = join(ROOT, 'services', 'cli', 'bin', 'mcp-fleet.js');
const { register } = await import('tsx/esm/api');
register();
process.setSourceMapsEnabled(false);
process.argv = [process.argv[0], bin, 'up', ...process.argv.slice(2)];
const { main } = await import(pathToFileURL(join(ROOT, 'services', 'cli', 'src', 'main.ts')).href);
process.exitCode = await main(process.argv.slice(2));

#!/bin/sh
# The services image's entrypoint (Dockerfile): `mcp-fleet <verb> …` under node, with the V8 flags
# that verb's process needs. V8 reads them only when the process starts (a running process cannot
# change them), and an operator should not have to know them (NODE_OPTIONS), so the launch sets them.
#
#   agent  --max-semi-space-size=2    a young generation of 2 MB semi-spaces, not up to 16 MB each
#                                     (three of them): with a thousand probes in flight node's
#                                     default grows to its cap, ~40 MB of the 200 MB goal.
#          --heap-growing-percent=30  the old generation is collected once it grew 30% past what the
#                                     last collection kept, not up to 4×: a slow probe's objects are
#                                     promoted before it ends, so finished probes pile up there as
#                                     garbage until the next collection. Costs no measurable CPU.
#          --liftoff-only             WebAssembly (undici's HTTP parser) stays on V8's baseline
#                                     compiler: optimising it with TurboFan holds its compiler's memory
#                                     for good (as for `npm start`, tools/start.mjs), and parsing a
#                                     probe's few responses is no slower for it.
#   Measured by `npm run bench:memory -- --part agent`, which reads them from here (README,
#   Benchmarks). Other verbs run with node's defaults.
#
# An agent runs from the bundle the image's build makes (`npm run build:agent`: dist/run.js, plain
# JavaScript, no tsx and its ~40 MB); without one (a checkout) from the sources, as bin/mcp-fleet.js does.
# `exec`: node replaces this shell, so it is the container's process 1 and receives its signals.
set -e
here="$(dirname "$0")"
flags=""
entry="$here/mcp-fleet.js"
case "$1" in
  agent)
    flags="--max-semi-space-size=2 --heap-growing-percent=30 --liftoff-only"
    if [ -f "$here/../dist/run.js" ]; then entry="$here/../dist/run.js"; fi
    ;;
esac
# $flags unquoted: one word per flag.
exec node $flags "$entry" "$@"

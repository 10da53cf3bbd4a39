// How a long-running verb (agent, control, up, sim, demo, record) waits to be told to stop. A file of
// its own: importing it from commands/sim.ts loaded the simulated fleet (the MCP SDKs) into every
// agent (bench:memory).

/** Resolves on the first SIGINT or SIGTERM (Ctrl-C, `docker stop`, a pod's termination). */
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}

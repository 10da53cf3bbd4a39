// The simulated fleet in a process of its own, so a benchmark's servers do not share the
// client's event loop. Reports its targets to the parent over IPC, then serves until killed.
import { startSim } from '@mcp-fleet/fleet-sim';

const sim = await startSim();
process.send?.({ targets: sim.targets.map((t) => ({ name: t.name, url: t.url })) });
process.on('disconnect', () => void sim.close().then(() => process.exit(0)));

// BENCH_CPU_PROF=<dir>: a V8 CPU profile of a process over the measured window only (not the set-up
// or the drain), taken in-process through node:inspector, so the bench can tell where control's
// and an agent's CPU goes per job at the pass's rate. Read one with `npm run bench:cpuprofile`.
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';

export type WindowProfile = { stop(file: string): Promise<void> };

export async function startWindowProfile(): Promise<WindowProfile> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  // 1 ms between samples (V8's default): enough samples for a 90 s window, little overhead.
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  await session.post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      await writeFile(file, JSON.stringify(profile));
    },
  };
}

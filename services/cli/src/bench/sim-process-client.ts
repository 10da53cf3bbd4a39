// Start the simulated fleet in a process of its own (sim-process.ts) and learn its targets' URLs.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export async function startSimProcess(): Promise<{ urls: Map<string, string>; stop: () => void }> {
  const child = fork(fileURLToPath(new URL('./sim-process.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const targets = await new Promise<{ name: string; url: string }[]>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { targets: { name: string; url: string }[] }).targets));
    child.once('exit', (code) => reject(new Error(`the sim process exited (${code})`)));
  });
  return { urls: new Map(targets.map((t) => [t.name, t.url])), stop: () => child.disconnect() };
}

// The bench's child processes: the cheap fleet (its CPU is not the pipeline's) and, with
// BENCH_AGENT_PROCS=n, agent processes. child.ts is what they run; this is the parent's side.
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { DeliveryStats } from './bench-agent';
import type { Scrape } from './scraper';
import { note } from './settings';

export type ToChild =
  | { type: 'stats' }
  | { type: 'stop' }
  | { type: 'profile-start' }
  | { type: 'profile-stop'; file: string }
  | { type: 'scrape-start'; url: string; everyS: number }
  | { type: 'scrape-stop' }
  | { type: 'scrapes' };
export type FromChild =
  | { type: 'ready'; urls?: string[] }
  | { type: 'profiling' }
  | { type: 'profiled' }
  | ({ type: 'stats'; requests?: number } & Partial<DeliveryStats>)
  | { type: 'stopped' }
  | { type: 'scrapes'; scrapes: Scrape[] };

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url));

/** child.ts in a role; `ask` sends a message and waits for the answer of a type. */
export function forkChild(role: 'fleet' | 'agent', args: string[]) {
  const child: ChildProcess = fork(CHILD, [role, ...args], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // A send to a child that died is reported by the answer's timeout or exit, not as a crash here.
  child.on('error', (err) => note(`${role} process: ${err.message}`));
  const next = <T extends FromChild['type']>(type: T, timeoutMs = 60_000) =>
    new Promise<Extract<FromChild, { type: T }>>((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`${role} process: no ${type} within ${timeoutMs} ms`)), timeoutMs);
      const onMessage = (m: FromChild) => m.type === type && done(undefined, m as Extract<FromChild, { type: T }>);
      const onExit = (code: number | null) => done(new Error(`${role} process exited (${code})`));
      const done = (err?: Error, m?: Extract<FromChild, { type: T }>) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (err) reject(err);
        else resolve(m!);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  return {
    pid: child.pid ?? 0,
    next,
    /** A message that has no answer. */
    send(msg: ToChild) {
      if (child.connected) child.send(msg);
    },
    ask<T extends FromChild['type']>(msg: ToChild, type: T) {
      const answer = next(type);
      if (child.connected) child.send(msg);
      else return Promise.reject(new Error(`${role} process is gone`));
      return answer;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
export type Child = ReturnType<typeof forkChild>;

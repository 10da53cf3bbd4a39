// What is left of the processes a test started, read from /proc (Linux): the stdio probes must
// leave none running and no zombie behind. A zombie has no command line any more, so zombies are
// found by parent (this process), live processes by a marker argument the test gave them.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessState {
  pid: number;
  ppid: number;
  /** R, S, D, Z (zombie), T… */
  state: string;
  cmdline: string;
}

function read(pid: string): ProcessState | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses; the state follows the last ')'.
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
    return { pid: Number(pid), ppid: Number(ppid), state: state ?? '?', cmdline };
  } catch {
    return undefined; // gone between the listing and the read
  }
}

export function allProcesses(): ProcessState[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((pid) => read(pid) ?? []);
}

/** Live processes whose command line carries `marker`, and zombies whose parent is this process. */
export function leftovers(marker: string): ProcessState[] {
  return allProcesses().filter(
    (p) => (p.cmdline.includes(marker) && p.state !== 'Z') || (p.ppid === process.pid && p.state === 'Z'),
  );
}

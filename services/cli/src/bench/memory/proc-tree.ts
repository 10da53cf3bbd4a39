// Resident memory of a process tree, read from /proc (Linux only, as the benches are): a root and
// every process descended from it, each with its own RSS. A process that ends between two reads is
// simply not there; one we may not read counts as gone.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcRss {
  pid: number;
  /** What it is: its command line, shortened (node's script or the binary). */
  name: string;
  rssKib: number;
}

function readOr(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The parent pid from /proc/<pid>/stat (fields after the command name, which may hold spaces). */
function parentOf(pid: number): number | undefined {
  const stat = readOr(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** VmRSS in KiB (resident anonymous + file + shared memory: what `ps` and the goal count). */
export function rssKib(pid: number): number | undefined {
  const status = readOr(`/proc/${pid}/status`);
  const m = status && /^VmRSS:\s+(\d+) kB/m.exec(status);
  return m ? Number(m[1]) : undefined;
}

/** A short name: a node process's script (its last path parts), else the binary and its first word. */
function nameOf(pid: number): string {
  let argv = (readOr(`/proc/${pid}/cmdline`) ?? '').split('\0').filter(Boolean);
  // A process that set its title (npm) has one string for its whole command line.
  if (argv.length === 1) argv = argv[0]!.split(' ');
  const exe = (argv[0] ?? '?').split('/').pop()!;
  if (exe === 'node') {
    const script = argv.slice(1).find((a) => !a.startsWith('-') && /[/.]/.test(a));
    return script ? `node ${script.split('/').slice(-2).join('/')}` : 'node';
  }
  // npm sets its title to `npm start …`; a shell is `sh -c …`.
  return argv[1] && !argv[1].includes('/') ? `${exe} ${argv[1]}` : exe;
}

/** The root and all its descendants alive now, each with its RSS. */
export function treeRss(root: number): ProcRss[] {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const pid = Number(d);
    const ppid = parentOf(pid);
    if (ppid === undefined) continue;
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const out: ProcRss[] = [];
  const walk = (pid: number) => {
    const kib = rssKib(pid);
    if (kib === undefined) return;
    out.push({ pid, name: nameOf(pid), rssKib: kib });
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

export const mib = (kib: number) => Math.round(kib / 1024);

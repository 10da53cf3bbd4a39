// The CPU of this process's ended children (the stdio servers a probe started and reaped), for the
// stdio benches: cutime + cstime of /proc/self/stat, in µs. Linux only, as the benches are.
import { readFileSync } from 'node:fs';

/** USER_HZ: the unit of /proc's tick counts on Linux. */
const USER_HZ = 100;

export function reapedChildrenCpuMicros(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // After the command name (which may hold spaces) and the state: cutime and cstime are index 13 and 14.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1_000_000) / USER_HZ;
}

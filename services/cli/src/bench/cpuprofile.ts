// `npm run bench:cpuprofile -- <file.cpuprofile> [--top N]`: where a V8 CPU profile's time went,
// as self time by function and by package (node_modules package, workspace service, or node's own),
// in % of the profile's busy time and ms. Used to read bench:pipeline's BENCH_CPU_PROF profiles.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { columns } from '../table';

type Node = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

/** Who a frame belongs to: an npm package, one of our services, node itself, or V8's own states. */
export function ownerOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const service = /\/(services\/[^/]+|web|tools)\//.exec(url);
  if (service) return service[1]!;
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  return url;
}

export function summarize(profile: Profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  for (const [k, id] of profile.samples.entries()) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[k] ?? 0));
  const fns = new Map<string, number>();
  const owners = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    // (program) is V8 and node outside JS, (garbage collector) the heap's: both are busy time.
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    total += us;
    const short = url.replace(/^.*node_modules\//, '').replace(/^.*\/(services|web|tools)\//, '$1/');
    const key = `${functionName || '(anonymous)'} ${short}:${lineNumber + 1}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
    const o = ownerOf(url, functionName);
    owners.set(o, (owners.get(o) ?? 0) + us);
  }
  // Each sample charged to the nearest frame of our own code on its stack (a library's time to
  // whichever of our functions called it): what a change in our code can take away.
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ours = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const top = byId.get(id)!.callFrame.functionName;
    if (top === '(idle)') continue;
    let key = top.startsWith('(') ? top : '(no frame of ours)';
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url, lineNumber } = byId.get(at)!.callFrame;
      if (/\/(services|web|tools)\//.test(url) && !url.includes('node_modules')) {
        key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(services|web|tools)\//, '$1/')}:${lineNumber + 1}`;
        break;
      }
    }
    ours.set(key, (ours.get(key) ?? 0) + us);
  }
  const wallUs = profile.endTime - profile.startTime;
  return { total, idle, wallUs, fns, owners, ours };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    options: { top: { type: 'string', default: '40' } },
    allowPositionals: true,
  });
  const top = Number(values.top);
  for (const file of positionals) {
    const s = summarize(JSON.parse(readFileSync(file, 'utf8')) as Profile);
    const pct = (us: number) => ((100 * us) / s.total).toFixed(1);
    const rows = (m: Map<string, number>) =>
      [...m.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([k, us]) => [pct(us), (us / 1000).toFixed(0), k]);
    console.log(
      `${file}: ${(s.wallUs / 1e6).toFixed(1)} s profiled, busy ${(s.total / 1e6).toFixed(1)} s ` +
        `(${((100 * s.total) / s.wallUs).toFixed(1)}% of a core), idle ${(s.idle / 1e6).toFixed(1)} s`,
    );
    console.log(columns([['% busy', 'ms', 'owner'], ...rows(s.owners)]));
    console.log(columns([['% busy', 'ms', 'function (self time)'], ...rows(s.fns)]));
    console.log(columns([['% busy', 'ms', 'our function (with the library frames it called)'], ...rows(s.ours)]));
  }
}

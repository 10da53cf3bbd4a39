// The README's package graph ("## Architecture") is what the package.json files say: each package's
// runtime dependencies on other workspaces, no more and no fewer, and no cycle. A new import edge
// that the README does not show fails here, so the picture a newcomer reads stays the real one.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SCOPE = '@mcp-fleet/';

/** Each runtime workspace (services/*, web) and the workspaces its `dependencies` name. */
function packageGraph(): Map<string, string[]> {
  const dirs = [
    ...readdirSync(join(ROOT, 'services'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(ROOT, 'services', d.name)),
    join(ROOT, 'web'),
  ];
  const graph = new Map<string, string[]>();
  for (const dir of dirs) {
    let pkg: { name: string; dependencies?: Record<string, string> };
    try {
      pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    const deps = Object.keys(pkg.dependencies ?? {})
      .filter((d) => d.startsWith(SCOPE))
      .map((d) => d.slice(SCOPE.length));
    graph.set(pkg.name.slice(SCOPE.length), deps.sort());
  }
  return graph;
}

/** The README's graph: lines `name → a, b` (or `→ -`) in the first code block after its heading. */
function readmeGraph(): Map<string, string[]> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Architecture'));
  const block = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  const graph = new Map<string, string[]>();
  for (const line of block.split('\n')) {
    const m = /^([a-z-]+)\s+→\s+(.*)$/.exec(line.trim());
    if (!m) continue;
    const deps = m[2]!.trim() === '-' ? [] : m[2]!.split(',').map((d) => d.trim());
    graph.set(m[1]!, deps.sort());
  }
  return graph;
}

describe('the package graph', () => {
  it("is the README's: every workspace with the workspaces it depends on at run time", () => {
    const real = Object.fromEntries(packageGraph());
    expect(Object.keys(real).length).toBeGreaterThan(5);
    expect(Object.fromEntries(readmeGraph())).toEqual(real);
  });

  it('has no cycle: dependencies point down', () => {
    const graph = packageGraph();
    const state = new Map<string, 'visiting' | 'done'>();
    const cycle: string[] = [];
    const visit = (name: string, path: string[]): void => {
      if (state.get(name) === 'done') return;
      if (state.get(name) === 'visiting') {
        cycle.push([...path, name].join(' → '));
        return;
      }
      state.set(name, 'visiting');
      for (const dep of graph.get(name) ?? []) visit(dep, [...path, name]);
      state.set(name, 'done');
    };
    for (const name of graph.keys()) visit(name, []);
    expect(cycle).toEqual([]);
  });
});

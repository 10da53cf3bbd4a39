// Every workspace a file imports is declared in that workspace's package.json (dependencies or
// devDependencies), tests and scripts included: an undeclared one resolves today only because npm
// hoists every workspace to the root, and turbo, which builds in dependency order, cannot see it.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SKIP = new Set(['node_modules', '.next', 'dist', '.turbo', 'coverage']);
const SOURCE = /\.(ts|tsx|mts|js|mjs)$/;
const IMPORT = /(?:from\s+|import\s*\(\s*|import\s+|require\s*\(\s*)['"](@mcp-fleet\/[a-z0-9-]+)/g;

/**
 * Probe's tests probe the simulated fleet and look for leftover stdio processes with testkit, and
 * fleet-sim and testkit are built on probe: declaring them would be a cycle, which turbo refuses.
 * Vitest runs them all from source, so no build order is at stake. Tests only.
 */
const UNDECLARABLE: Record<string, readonly string[]> = {
  '@mcp-fleet/probe': ['@mcp-fleet/fleet-sim', '@mcp-fleet/testkit'],
};

interface Workspace {
  dir: string;
  name: string;
  declared: Set<string>;
}

function workspaces(): Workspace[] {
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] };
  const dirs = root.workspaces.flatMap((w) =>
    w.endsWith('/*')
      ? readdirSync(join(ROOT, w.slice(0, -2)), { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .map((d) => join(ROOT, w.slice(0, -2), d.name))
      : [join(ROOT, w)],
  );
  return dirs.flatMap((dir) => {
    let pkg: { name: string; dependencies?: object; devDependencies?: object; peerDependencies?: object };
    try {
      pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    } catch {
      return [];
    }
    const declared = new Set(
      [pkg.dependencies, pkg.devDependencies, pkg.peerDependencies].flatMap((d) => Object.keys(d ?? {})),
    );
    return [{ dir, name: pkg.name, declared }];
  });
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (SOURCE.test(entry.name)) yield path;
  }
}

/** `file imports @mcp-fleet/x, which its package.json does not declare`, one line per file and workspace. */
function undeclared(ws: Workspace): string[] {
  const found: string[] = [];
  for (const file of sourceFiles(ws.dir)) {
    const used = new Set([...readFileSync(file, 'utf8').matchAll(IMPORT)].map((m) => m[1]!));
    const inTests = relative(ws.dir, file).startsWith('test/');
    for (const name of used)
      if (name !== ws.name && !ws.declared.has(name) && !(inTests && UNDECLARABLE[ws.name]?.includes(name)))
        found.push(
          `${relative(ROOT, file)} imports ${name}, which ${relative(ROOT, ws.dir)}/package.json does not declare`,
        );
  }
  return found;
}

describe('workspace imports', () => {
  const all = workspaces();

  it('finds the workspaces', () => {
    expect(all.map((w) => w.name)).toEqual(
      expect.arrayContaining(['@mcp-fleet/probe', '@mcp-fleet/testkit', '@mcp-fleet/web']),
    );
  });

  it.each(all.map((w) => [w.name, w] as const))('%s declares every workspace it imports', (_, ws) => {
    expect(undeclared(ws)).toEqual([]);
  });
});

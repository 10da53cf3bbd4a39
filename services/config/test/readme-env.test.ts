// The README's environment table and the roles' schemas say the same variables: one added to a
// schema and not to the table (or left in the table when no role reads it any more) fails here,
// naming the roles that read it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROLES, variablesOf } from '../src';

const README = readFileSync(join(import.meta.dirname, '..', '..', '..', 'README.md'), 'utf8');

/** The variables the table's first column names (`<VAR>_FILE` stands for every secret's file). */
function tableVariables(): Set<string> {
  const lines = README.split('\n');
  const head = lines.findIndex((l) => /^\|\s*variable\s*\|\s*what it selects\s*\|/.test(l));
  expect(head, "the README's environment table").toBeGreaterThan(-1);
  const names = new Set<string>();
  for (const line of lines.slice(head + 2)) {
    if (!line.startsWith('|')) break;
    const first = line.split('|')[1]!;
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_]*|<VAR>_FILE)`/g)) names.add(m[1]!);
  }
  return names;
}

describe("the README's environment table", () => {
  it("lists every variable a role's schema reads, and no other", () => {
    const table = tableVariables();
    const readers = new Map<string, string[]>();
    for (const role of ROLES)
      for (const v of variablesOf(role))
        if (!v.meta.fileOf || !table.has('<VAR>_FILE') || v.name === 'MCP_FLEET_SECRET_KEY_FILE')
          readers.set(v.name, [...(readers.get(v.name) ?? []), role.role]);
    const problems: string[] = [];
    for (const [name, roles] of readers)
      if (!table.has(name)) problems.push(`${name} (read by ${roles.join(', ')}) is not in the README's table`);
    for (const name of table)
      if (name !== '<VAR>_FILE' && !readers.has(name))
        problems.push(`${name} is in the README's table, and no role reads it`);
    expect(problems).toEqual([]);
  });
});

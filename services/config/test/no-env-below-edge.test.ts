// The environment is read at the edge only: the CLI's verbs (services/cli/src) and the dashboard's
// start (web/index.ts, web/serve.ts, web/bin) parse it with config's schemas and pass settings
// down. Below them no production file reads process.env. (testkit is tests' support, not production.)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..', '..');
const EDGE = ['services/cli', 'services/testkit'];
const ROOTS = [
  ...readdirSync(join(REPO, 'services'))
    .filter((p) => !EDGE.includes(`services/${p}`))
    .map((p) => `services/${p}/src`),
  'web/lib',
  'web/app',
  'web/components',
  'web/proxy.ts',
];

function sources(path: string): string[] {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch {
    return [];
  }
  if (st.isFile()) return /\.(ts|tsx|js|mjs)$/.test(path) ? [path] : [];
  return readdirSync(path)
    .filter((e) => e !== 'node_modules' && e !== '.next')
    .flatMap((e) => sources(join(path, e)));
}

describe('the environment', () => {
  it('is read by no production file below the edge', () => {
    const hits: string[] = [];
    for (const root of ROOTS)
      for (const file of sources(join(REPO, root)))
        readFileSync(file, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (/\bprocess\.env\b/.test(line)) hits.push(`${relative(REPO, file)}:${i + 1}: ${line.trim()}`);
          });
    expect(hits).toEqual([]);
  });
});
